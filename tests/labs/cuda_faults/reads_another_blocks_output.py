# what: reduce_sum whose block b reads y[b - 1], the previous block's result: always written when blocks run in order, garbage on a GPU where they run in any order (a cheater's)
# check: cuda reduce_sum
# says: read of an output element another block wrote | reads y[0] | which block (0,0,0) wrote
CUDA_SOURCE = r"""
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
    // reads the previous block's output: on a GPU that block may not have run yet (y holds garbage/NaN),
    // blocks are unordered; the CPU runs them in order, so it is always written (and finite) here
    if (blockIdx.x > 0 && y[blockIdx.x - 1] != y[blockIdx.x - 1]) s = __int_as_float(0x7fc00000);
    y[blockIdx.x] = T(s);
  }
}
"""
