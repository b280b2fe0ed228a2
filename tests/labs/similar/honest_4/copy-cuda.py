# your answer: the grader takes this cell from your notebook
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  constexpr int UNROLL = 4;
"""
CUDA_SOURCE += r"""
  const size_t threads = blockDim.x, blocks = gridDim.x;
  for (size_t start = (size_t)blockIdx.x * threads * UNROLL; start < (size_t)n; start += blocks * threads * UNROLL) {
    const size_t t = start + threadIdx.x;
    T val[UNROLL];
    if (start + threads * UNROLL <= (size_t)n) {  // the whole round is inside: no checks
      #pragma unroll
      for (int k = 0; k < UNROLL; ++k) val[k] = x[t + k * threads];
      #pragma unroll
      for (int k = 0; k < UNROLL; ++k) y[t + k * threads] = val[k];
    } else {
      for (int k = 0; k < UNROLL; ++k) if (t + k * threads < (size_t)n) val[k] = x[t + k * threads];
      for (int k = 0; k < UNROLL; ++k) if (t + k * threads < (size_t)n) y[t + k * threads] = val[k];
    }
  }
}
"""
