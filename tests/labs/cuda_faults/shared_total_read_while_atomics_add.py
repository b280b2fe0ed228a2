# what: reduce_sum whose threads atomicAdd into a __shared__ total and one thread reads it with no __syncthreads after the adds: other warps may still be adding on a GPU (a cheater's; atomics were left out of the race check)
# check: cuda reduce_sum
# says: data race on shared memory | total
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;  // one block per row
  constexpr int UNROLL = 4;
  __shared__ float total;
  if (threadIdx.x == 0) total = 0.f;
  __syncthreads();
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  atomicAdd(&total, acc);
  // no __syncthreads() here: one thread reads the total while other warps may still be adding
  // (thread blockDim.x - 2 is the one the CPU emulator happens to run last after a barrier)
  if (threadIdx.x == blockDim.x - 2) y[blockIdx.x] = T(total);
}
"""
