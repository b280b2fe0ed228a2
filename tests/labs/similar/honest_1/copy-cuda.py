# your answer: the grader takes this cell from your notebook
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  constexpr int UNROLL = 4;
"""
CUDA_SOURCE += r"""
  const int64_t per_round = (int64_t)gridDim.x * blockDim.x * UNROLL;
  int64_t base = (int64_t)blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
  while (base < n) {
    T regs[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const int64_t idx = base + (int64_t)u * blockDim.x;
      if (idx < n) regs[u] = x[idx];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const int64_t idx = base + (int64_t)u * blockDim.x;
      if (idx < n) y[idx] = regs[u];
    }
    base += per_round;
  }
}
"""
