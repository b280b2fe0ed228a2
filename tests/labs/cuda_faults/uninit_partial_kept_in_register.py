# what: reduce_sum whose threads keep their partial sum in a register and store it to shared memory only inside the halving loop: the first step reads partial[tid + 128], which threads 128..255 never stored
# check: cuda reduce_sum
# says: read of shared memory no thread wrote | thread (0,0,0) of block (0,0,0) reads partial[128] at CUDA_SOURCE line 11 | which no thread of the block wrote: on a GPU it holds garbage | store a partial result in shared memory before it is read back
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  __shared__ float partial[256];
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) {
      acc += partial[threadIdx.x + k];
      partial[threadIdx.x] = acc;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = T(acc);
}
"""
