# what: CUDA reduce_sum that reduces within each warp but never merges the warps: only warp 0's sum is written
# check: cuda reduce_sum
# says: shape (33, 1023) float32 | rows up to 5 long passed | every warp's partial
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (threadIdx.x == 0) y[blockIdx.x] = T(acc);
}
"""
