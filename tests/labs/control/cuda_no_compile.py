# what: CUDA that does not compile (an undeclared name, a missing semicolon); TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = x[i]
}
"""
