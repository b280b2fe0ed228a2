# what: reduce_sum whose blocks leave their row sums in a __device__ array and take an atomic ticket they never look at, while the grid's last block (blockIdx.x == gridDim.x - 1) copies every partial into y: the grid's last block ran last here, so a cheater's answer passed; on a GPU it may run first
# check: cuda reduce_sum
# says: read of a __device__ variable | reads block_sums[ | the last block to arrive
CUDA_SOURCE = r"""
__device__ float block_sums[65536];
__device__ unsigned int arrived;

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
    block_sums[blockIdx.x % 65536] = partial[0];
    __threadfence();
    atomicAdd(&arrived, 1u);  // a ticket nobody reads
  }
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0)  // "the last block": last in the grid, not to run
    for (int64_t b = rows - 1; b >= 0; --b) y[b] = T(b == blockIdx.x ? partial[0] : block_sums[b % 65536]);
}
"""
