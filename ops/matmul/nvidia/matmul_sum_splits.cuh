// The last step of a matmul that split K over blocks (the sm_90 kernel, the skinny kernel): each
// split wrote its f32 sums to partials[split] (M x N, row-major); out is their sum, added in split
// order so the result does not depend on which block finished first.
#pragma once

#include <cstdint>

#include "cuda_launch.cuh"
#include "matmul_descriptor.h"

namespace oprt::matmul_sum_splits {

template <class T>
__global__ void sum_splits(const float* __restrict__ partials, int splits, T* __restrict__ out, MatmulPlan p) {
  const int64_t mn = p.m * p.n;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < mn; i += int64_t{gridDim.x} * blockDim.x) {
    float sum = 0.f;
    for (int s = 0; s < splits; ++s) sum += partials[s * mn + i];
    out[i / p.n * p.o_m + i % p.n * p.o_n] = from_float<T>(sum);
  }
}

template <class T>
void launch(const float* partials, int splits, T* out, const MatmulPlan& p, cudaStream_t stream) {
  sum_splits<T><<<grid_for(p.m * p.n, 256), 256, 0, stream>>>(partials, splits, out, p);
  check_launch("matmul split-K sum");
}

}  // namespace oprt::matmul_sum_splits
