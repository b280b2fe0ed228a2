# what: copy whose grid-stride step counts the grid twice: every other stretch of the large input is skipped (NaN: never written)
# check: cuda copy
# says: shape (1048579,) | 1048579 elements | never wrote them
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 2 * (int64_t)gridDim.x * blockDim.x) y[i] = x[i];
}
"""
