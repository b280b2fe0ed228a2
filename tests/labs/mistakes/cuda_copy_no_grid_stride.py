# what: CUDA copy with one element per thread and no grid-stride loop: the launcher's blocks (1056 on a GPU, 24 in the CPU check) stop short
# check: cuda copy
# says: shape (1048579,) | Only the tail is wrong | grid-stride loop
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
"""
