// The sm_90a matmul (wgmma fed by TMA), built only where the CUDA architectures include 90: see
// sm90/matmul_wgmma.cu and CMakeLists.txt (OPRT_HAVE_WGMMA). The default on compute capability 9.0;
// OPRT_MATMUL_STRATEGY=mma turns it off.
#pragma once

#include <cuda_runtime.h>

#include "matmul_descriptor.h"

namespace oprt {

// How many pieces the wgmma kernel would split K into for this plan on the current GPU (1: none):
// only a batch of one whose output tiles leave most SMs idle is split. The caller gives the
// workspace for the partials (splits x M x N floats).
int matmul_wgmma_splits(const MatmulPlan& p, oprt_dtype dtype);

// Runs out = a @ b with the wgmma kernel and returns true, or returns false (nothing launched)
// when this device or these operands cannot take it: not an sm_90 GPU, f32, K = 0, or an
// operand TMA cannot describe (no unit-stride dim, a stride or pointer not 16-byte aligned).
// pipelined: keep one k-tile's wgmma in flight (the wgmma-pipe experiment; row-major pairs).
// splits > 1 (from matmul_wgmma_splits): K split that many ways, the partial sums in `partials`.
bool matmul_wgmma(const MatmulPlan& p, oprt_dtype dtype, const void* a, const void* b, void* out,
                  cudaStream_t stream, bool pipelined = false, int splits = 1, float* partials = nullptr);

}  // namespace oprt
