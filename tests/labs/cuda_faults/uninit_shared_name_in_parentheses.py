# what: reduce_sum whose __shared__ total, declared with its name in parentheses, is never zeroed before the atomics (a cheater's spelling that hid it from the initcheck: the statics start at zero here, garbage on a GPU)
# check: cuda reduce_sum
# says: read of shared memory no thread wrote | total
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;  // one block per row
  constexpr int UNROLL = 4;
  __shared__ float (total);  // never set to 0 before the atomics: garbage on a GPU
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int mask = 16; mask > 0; mask /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, mask);
  if (threadIdx.x % 32 == 0) atomicAdd(&total, acc);
  __syncthreads();
  if (threadIdx.x == 0) {
    y[blockIdx.x] = T(total);
    total = 0.f;  // reset for the next block (a static here: zero at load, and kept between blocks)
  }
}
"""
