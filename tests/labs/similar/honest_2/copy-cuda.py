# your answer: the grader takes this cell from your notebook
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  constexpr int UNROLL = 4;
"""
CUDA_SOURCE += r"""
  const int64_t bd = blockDim.x;
  const int64_t jump = bd * UNROLL * gridDim.x;
  for (int64_t i0 = blockIdx.x * bd * UNROLL + threadIdx.x; i0 < n; i0 += jump) {
    T v[UNROLL];
    v[0] = x[i0];
    if (i0 + bd < n) v[1] = x[i0 + bd];
    if (i0 + 2 * bd < n) v[2] = x[i0 + 2 * bd];
    if (i0 + 3 * bd < n) v[3] = x[i0 + 3 * bd];
    y[i0] = v[0];
    if (i0 + bd < n) y[i0 + bd] = v[1];
    if (i0 + 2 * bd < n) y[i0 + 2 * bd] = v[2];
    if (i0 + 3 * bd < n) y[i0 + 3 * bd] = v[3];
  }
}
"""
