# what: correct the CUDA sample threadFenceReduction's form: each block writes its row sum to y (its own element), fences, takes an atomicInc ticket; the last block reads every y[b] to compute a grand total into a __device__ float
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
__device__ unsigned int retirement_count;
__device__ float grand_total;

__device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  float t = 0.f;
  for (int w = 0; w < (int)(blockDim.x / 32); ++w) t += warp_sums[w];
  return t;
}

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ bool am_last;
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float part = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) part += static_cast<float>(row[j]);
  const float s = block_sum(part);
  if (threadIdx.x == 0) {
    y[blockIdx.x] = T(s);
    __threadfence();
    const unsigned ticket = atomicInc(&retirement_count, gridDim.x);
    am_last = (ticket == gridDim.x - 1);
  }
  __syncthreads();
  if (am_last && threadIdx.x == 0) {
    float total = 0.f;
    for (unsigned b = 0; b < gridDim.x; ++b) total += static_cast<float>(y[b]);
    grand_total = total;
    retirement_count = 0;
  }
}
"""
