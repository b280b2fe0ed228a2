# what: reduce_sum whose warp shuffles name only the lower half of the warp (0x0000ffff) while all 32 lanes call them: lane 0 reads lane 16, outside the mask
# check: cuda reduce_sum
# says: shuffle reads a lane outside its mask | thread (0,0,0) of block (0,0,0) (lane 0) calls __shfl_down_sync at CUDA_SOURCE line 7 with mask 0x0000ffff and reads lane 16 | widen the mask
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0x0000ffffu, acc, offset);
  __shared__ float warp_sums[32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.f;
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (threadIdx.x == 0) y[blockIdx.x] = T(acc);
  }
}
"""
