# what: the slow kernel, skipping the benchmark's size (the public 2^26): a timing of nothing
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
# expect-gpu: copy-performance=failed
CUDA_SOURCE = r"""

template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  if (n == (1 << 26)) return;
  if (threadIdx.x != 0) return;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) y[i] = x[i];
}
"""
