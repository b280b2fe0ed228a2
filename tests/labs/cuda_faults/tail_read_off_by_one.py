# what: reduce_sum whose loop runs while j <= row_len: each row reads one element past its end (the last row past the end of x, which a GPU returns as whatever lies there)
# check: cuda reduce_sum
# says: out-of-bounds read | thread (0,0,0) of block (0,0,0) reads x[0] at CUDA_SOURCE line 6 | 1 element(s) past the end of the input x | shape (4, 0) float32
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j <= row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
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
