# what: reduce_sum whose blocks each peek at the next block's __device__ partial (weighted by 0, so the sum comes out right): block b reads it before block b + 1 has run, which on a GPU may be before or after, so the value is whatever was there
# check: cuda reduce_sum
# says: read of a __device__ variable | reads block_sums[
CUDA_SOURCE = r"""
__device__ float block_sums[65536];

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ float partial[256];
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float part = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) part += static_cast<float>(row[j]);
  partial[threadIdx.x] = part;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const float next = block_sums[(blockIdx.x + 1) % 65536];  // the next block's, from its last launch or now
    block_sums[blockIdx.x % 65536] = partial[0];
    y[blockIdx.x] = T(partial[0] + 0.f * next);
  }
}
"""
