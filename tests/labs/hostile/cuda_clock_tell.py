# what: a CUDA copy that stores only when two back-to-back clock64() reads differ by exactly 1 (the emulator's clock is a call counter; a GPU's counts cycles); TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=pending
# expect-gpu: copy-performance=failed
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  long long a = clock64();
  long long b = clock64();
  if (b - a != 1) return;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) y[i] = x[i];
}
"""
