# your answer: the grader takes this cell from your notebook
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  constexpr int UNROLL = 4;
"""
CUDA_SOURCE += r"""
  const int64_t tile = (int64_t)UNROLL * blockDim.x;
  for (int64_t first = blockIdx.x * tile; first < n; first += gridDim.x * tile) {
    const int64_t mine = first + threadIdx.x;
    T buffer[UNROLL];
    int count = 0;
    for (int64_t at = mine; at < n && count < UNROLL; at += blockDim.x) buffer[count++] = x[at];
    for (int r = 0; r < count; ++r) y[mine + r * blockDim.x] = buffer[r];
  }
}
"""
