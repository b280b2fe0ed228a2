# what: correct reduce_sum whose shared memory is written through memset (a constant size, which GCC expands inline) and memcpy (a size known at run time, a call of the C library), and which reads a __device__ variable no thread writes (zero-initialized on a GPU as well): the initcheck counts those writes and leaves __device__ memory alone (no fault)
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
__device__ float zero_bias;

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  __shared__ float partial[256], staged[256];
  __shared__ float zeros[4];
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  partial[threadIdx.x] = acc;
  if (threadIdx.x == 0) memset(zeros, 0, sizeof zeros);
  __syncthreads();
  if (threadIdx.x == 0) memcpy(staged, partial, blockDim.x * sizeof(float));
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) staged[threadIdx.x] += staged[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = T(staged[0] + zeros[3] + zero_bias);
}
"""
