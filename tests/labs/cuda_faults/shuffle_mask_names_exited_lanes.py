# what: reduce_sum whose second stage keeps only the 8 lanes that hold a warp's sum but still shuffles with the full mask: lanes 8..31 have exited
# check: cuda reduce_sum
# says: shuffle mask names an exited thread | thread (0,0,0) of block (0,0,0) calls __shfl_down_sync at CUDA_SOURCE line 13 with mask 0xffffffff | lane 8 (thread (8,0,0)); it has exited
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  __shared__ float warp_sums[32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < blockDim.x / 32) {
    acc = warp_sums[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (threadIdx.x == 0) y[blockIdx.x] = T(acc);
  }
}
"""
