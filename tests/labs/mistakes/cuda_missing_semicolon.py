# what: CUDA copy with a missing `;`: nvcc's error names the line of CUDA_SOURCE
# check: cuda copy
# says: CUDA_SOURCE(5): error: expected a ";" | lacks its `;`
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = x[i];
}
"""
