# your answer: the grader takes this cell from your notebook
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  constexpr int UNROLL = 4;
"""
CUDA_SOURCE += r"""
  const int64_t span = (int64_t)blockDim.x * UNROLL;
  const int64_t total = span * gridDim.x;
  for (int64_t p = blockIdx.x * span + threadIdx.x; p < n; p += total) {
    T hold[UNROLL];
    int64_t q = p;
    for (int e = 0; e < UNROLL; ++e, q += blockDim.x) if (q < n) hold[e] = x[q];
    q = p;
    for (int e = 0; e < UNROLL; ++e, q += blockDim.x) if (q < n) y[q] = hold[e];
  }
}
"""
