# what: correct reduce_sum that also counts finished blocks with CUDA's last-block pattern (partials in a __device__ array, an atomic ticket, the last block to arrive reads the others' partials): ordered on a GPU, so no fault
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
__device__ float block_sums[65536];
__device__ unsigned int arrived;
__device__ float grand_total;

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ float partial[256];
  __shared__ bool last;
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
    y[blockIdx.x] = T(partial[0]);
    block_sums[blockIdx.x % 65536] = partial[0];
    __threadfence();  // the partial is visible before the ticket says so
    last = atomicInc(&arrived, gridDim.x - 1) == gridDim.x - 1;  // wraps to 0 for the next launch
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    // the last block to arrive reads every block's partial (a grand total a real kernel would use)
    float total = 0.f;
    for (unsigned b = 0; b < gridDim.x && b < 65536; ++b) total += block_sums[b];
    grand_total = total;
  }
}
"""
