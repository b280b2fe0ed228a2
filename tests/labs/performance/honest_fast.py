# what: a correct, fast CUDA copy (grid-stride, four loads in flight per thread): honest, it earns the timing
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  constexpr int UNROLL = 4;
  const int64_t round = (int64_t)blockDim.x * UNROLL;
  for (int64_t base = (int64_t)blockIdx.x * round + threadIdx.x; base < n; base += (int64_t)gridDim.x * round) {
    T v[UNROLL];
    for (int k = 0; k < UNROLL; ++k)
      if (base + k * blockDim.x < n) v[k] = x[base + k * blockDim.x];
    for (int k = 0; k < UNROLL; ++k)
      if (base + k * blockDim.x < n) y[base + k * blockDim.x] = v[k];
  }
}
"""
