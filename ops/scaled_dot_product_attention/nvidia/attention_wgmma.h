// The sm_90a attention forward (wgmma), built only where the CUDA architectures include 90: see
// sm90/attention_wgmma.cu and CMakeLists.txt (OPRT_HAVE_WGMMA). The host runs it on compute
// capability 9.0 for calls with enough query tiles to fill the GPU; attention_mma.cuh elsewhere.
#pragma once

#include <cuda_runtime.h>

#include "scaled_dot_product_attention_descriptor.h"

namespace oprt {

// Query rows per block of the wgmma kernel (two warpgroups of 64): the host counts its blocks with it.
constexpr int kAttentionWgmmaRows = 128;

// Runs out = attention(q, k, v) with the wgmma kernel and returns true, or returns false (nothing
// launched) when this GPU or these operands cannot take it: not compute capability 9.0, not
// 16-bit, head dims other than D = Dv = 64 or 128, Sk = 0, or key / value strides TMA cannot
// describe. The caller has checked the tensor-core layout rules (16-byte rows, 16-byte aligned bases).
bool attention_wgmma(const AttentionPlan& p, oprt_dtype dtype, const void* q, const void* k, const void* v, void* out,
                     cudaStream_t stream);

}  // namespace oprt
