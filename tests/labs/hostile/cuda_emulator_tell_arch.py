# what: a CUDA kernel whose only store is inside `#ifndef __CUDA_ARCH__` (on a GPU the kernel's code is compiled with __CUDA_ARCH__ set; the CPU grader's header sets it too): it writes nothing anywhere, and must fail on both graders; TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=pending
# expect-gpu: copy-performance=failed
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
#ifndef __CUDA_ARCH__
    y[i] = x[i];
#endif
  }
}
"""
