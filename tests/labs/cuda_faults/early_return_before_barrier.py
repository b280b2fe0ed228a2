# what: reduce_sum where the threads with no element of the row return before the block's __syncthreads
# check: cuda reduce_sum
# says: __syncthreads not reached by every thread | thread (0,0,0) of block (0,0,0) waits at the __syncthreads at CUDA_SOURCE line 9 | thread (1,0,0) exited without reaching it | shape (1, 1) float32
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ float partial[256];
  if (row_len == 0) { if (threadIdx.x == 0) y[blockIdx.x] = T(0.f); return; }
  if (threadIdx.x >= row_len) return;  // nothing to add here
  partial[threadIdx.x] = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) partial[threadIdx.x] += static_cast<float>(x[blockIdx.x * row_len + j]);
  __syncthreads();
  if (threadIdx.x == 0) {
    float acc = 0.f;
    for (int k = 0; k < 256 && k < row_len; ++k) acc += partial[k];
    y[blockIdx.x] = T(acc);
  }
}
"""
