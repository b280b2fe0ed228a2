# what: correct reduce_sum with an xor butterfly, __ballot_sync/__activemask, float4-free atomics on shared memory and __half-safe conversions (no fault)
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
#include <cuda_fp16.h>

template <typename T>
__global__ void __launch_bounds__(256) reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  __shared__ float total;
  if (threadIdx.x == 0) total = 0.f;
  __syncthreads();
  float acc = 0.f;
#pragma unroll 4
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(__ldg(row + j));
  const unsigned all = __activemask();
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(all, acc, offset);
  const unsigned leaders = __ballot_sync(0xffffffffu, (threadIdx.x & 31) == 0);
  if ((threadIdx.x & 31) == 0 && (leaders & 1u)) atomicAdd(&total, acc);
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = T(total);
}
"""
