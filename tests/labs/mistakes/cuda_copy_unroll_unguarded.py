# what: lab 1 Part 2 unrolled by 4 with only the loop's `base < n`: the other three elements of a round are read and written past the end
# check: cuda copy
# says: shape (1,) float32 | past the end
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  constexpr int UNROLL = 4;
  const int64_t round = (int64_t)blockDim.x * UNROLL;
  for (int64_t base = (int64_t)blockIdx.x * round + threadIdx.x; base < n; base += (int64_t)gridDim.x * round) {
    T v[UNROLL];
    for (int k = 0; k < UNROLL; ++k) v[k] = x[base + k * blockDim.x];
    for (int k = 0; k < UNROLL; ++k) y[base + k * blockDim.x] = v[k];
  }
}
"""
