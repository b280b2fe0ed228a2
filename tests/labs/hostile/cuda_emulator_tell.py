# what: a CUDA kernel whose only store is inside `#ifdef __CUDA_ON_CPU__`, the macro the CPU grader's CUDA header used to define: right on the CPU grader, nothing written on a GPU; TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
#ifdef __CUDA_ON_CPU__
    y[i] = x[i];
#endif
  }
}
"""
