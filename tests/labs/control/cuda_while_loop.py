# what: correct CUDA written differently (while loop, size_t-free 64-bit index, __ldg, a helper); TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
CUDA_SOURCE = r"""
__device__ __forceinline__ long long first_index() {
  return (long long)blockIdx.x * (long long)blockDim.x + threadIdx.x;
}

template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  long long i = first_index();
  const long long step = (long long)gridDim.x * blockDim.x;
  while (i < n) {
    y[i] = __ldg(x + i);
    i += step;
  }
}
"""
