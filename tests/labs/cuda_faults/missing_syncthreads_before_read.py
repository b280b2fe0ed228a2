# what: reduce_sum whose first warp reads the other warps' partial sums from shared memory without the __syncthreads that makes them visible
# check: cuda reduce_sum
# says: data race on shared memory | thread (32,0,0) of block (0,0,0) writes warp_sums[1] at CUDA_SOURCE line 9 | read it at CUDA_SOURCE line 11 | put a __syncthreads()
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  __shared__ float warp_sums[32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  if (threadIdx.x < 32) {
    acc = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.f;
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (threadIdx.x == 0) y[blockIdx.x] = T(acc);
  }
}
"""
