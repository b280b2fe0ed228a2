# what: reduce_sum whose blocks hand a running total through a __device__ array, block b adding block b - 1's: right when blocks run in order, garbage on a GPU where they run in any order (a cheater's)
# check: cuda reduce_sum
# says: read of a __device__ variable | reads carry[ | which block (
CUDA_SOURCE = r"""
__device__ float carry[65536];

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ float partial[256];
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float part = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) part += static_cast<float>(row[j]);
  partial[threadIdx.x] = part;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int i = 0; i < 256; ++i) s += partial[i];
    // a prefix over blocks through global memory: block b trusts that block b - 1 already stored its
    // prefix, which holds only when blocks run one after another
    const float before = blockIdx.x > 0 ? carry[(blockIdx.x - 1) % 65536] : 0.f;
    carry[blockIdx.x % 65536] = before + s;
    y[blockIdx.x] = T(carry[blockIdx.x % 65536] - before);
  }
}
"""
