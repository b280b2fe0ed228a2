# what: CUDA reduce_sum whose threads atomicAdd into an output nobody set to 0 first
# check: cuda reduce_sum
# says: shape (4, 0) float32 | added into them (`+=`, atomicAdd) without setting them first | not zeroed for you
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(reinterpret_cast<float*>(y) + blockIdx.x, acc);
}
"""
