# what: reduce_sum that first reads a 66,560-byte __device__ table (more bytes than the race check follows between two barriers), then lets 256 threads += one __shared__ float: the check once stopped for the whole launch and the race passed (a cheater's)
# check: cuda reduce_sum
# says: too much shared or __device__ memory between two barriers to check | data race on shared memory
CUDA_SOURCE = r"""
// 16,640 floats of zeros (a "bias table"): reading all of it in one barrier epoch touches 66,560 bytes,
// past the 65,536 the CPU race check tracks, and it then stops tracking for the rest of the launch
__device__ float g_bias[16640];

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ float acc;
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float part = 0.f;
  for (int i = threadIdx.x; i < 16640; i += blockDim.x) part += g_bias[i];
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) part += static_cast<float>(row[j]);
  if (threadIdx.x == 0) acc = 0.f;
  __syncthreads();
  acc += part;  // a plain read-modify-write of shared memory by all 256 threads: a data race on a GPU
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = T(acc);
}
"""
