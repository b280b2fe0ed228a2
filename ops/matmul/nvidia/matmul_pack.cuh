// Packing a 16-bit operand whose rows the tensor-core kernels cannot read 16 bytes at a time.
//
// Both tensor-core kernels (mma.sync + cp.async here, wgmma + TMA in sm90/) need a unit-stride dim
// whose rows start 16 bytes apart: a leading stride and batch stride that are multiples of 8
// elements. A K or N that is not a multiple of 8 (K = 1995, N = 83, a vocabulary of 50257) breaks
// that for a contiguous operand, and such a call fell to the CUDA-core kernel: 5810 x 12368 x 1995
// f16 ran at 0.10x cuBLAS on an H100 (data/results/2026-12-07-h100-sweep-matmul-seed28114.json).
// Here the operand is first copied into the workspace with its leading stride rounded up to 8
// elements; the kernels then read the copy. The pad elements are never read: both kernels stop
// at the plan's K, M and N (TMA fills past a dim with zeros, the mma.sync loads bounds-check the
// edge chunk), so the copy writes only the operand's own elements. The copy is one pass over the
// operand, a few percent of a multiply whose M, N and K run to the thousands.
#pragma once

#include <cstdint>

#include "cuda_launch.cuh"
#include "matmul_workspace_plan.h"

namespace oprt::matmul_pack {

// dst[z][o][i] = src[z * s_batch + o * s_outer + i * s_inner] for i < inner (the pad left as it is).
template <class T>
__global__ void pack_kernel(const T* __restrict__ src, T* __restrict__ dst, int64_t inner, int64_t outer,
                            int64_t rows, int64_t ld, int64_t s_inner, int64_t s_outer, int64_t s_batch) {
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const int64_t z = row / outer, o = row % outer;
    const T* s = src + z * s_batch + o * s_outer;
    T* d = dst + row * ld;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < inner; i += int64_t{gridDim.x} * blockDim.x)
      d[i] = s[i * s_inner];
  }
}

// Copies one operand (dims mn, k; strides s_mn, s_k, batch stride s_batch) into dst as `c` says.
template <class T>
void pack(const Copy& c, const T* src, T* dst, int64_t s_mn, int64_t s_k, int64_t s_batch, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t rows = c.batches * c.outer;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>((c.inner + kThreads - 1) / kThreads, 64)),
                  static_cast<unsigned>(std::min<int64_t>(rows, 65535)));
  const SourceStrides s = source_strides(c, s_mn, s_k);
  pack_kernel<T><<<grid, kThreads, 0, stream>>>(src, dst, c.inner, c.outer, rows, c.ld, s.inner, s.outer, s_batch);
  check_launch("matmul operand packing");
}

// Copies the operands marked in `k` into the workspace on `stream`, points a and b at the copies,
// and returns the plan the kernels see (packed()).
template <class T>
MatmulPlan apply(const Packing& k, const MatmulPlan& p, const T*& a, const T*& b, void* workspace, cudaStream_t stream) {
  auto* base = static_cast<unsigned char*>(workspace);
  const bool batched = p.batch > 1;
  if (k.a.needed) {
    T* dst = reinterpret_cast<T*>(base);
    pack(k.a, a, dst, p.a_m, p.a_k, batched ? p.a_batch : 0, stream);
    a = dst;
  }
  if (k.b.needed) {
    T* dst = reinterpret_cast<T*>(base + k.b_offset());
    pack(k.b, b, dst, p.b_n, p.b_k, batched ? p.b_batch : 0, stream);
    b = dst;
  }
  return packed(k, p);
}

}  // namespace oprt::matmul_pack
