# what: the slow kernel, skipping a big call whose first and last inputs match the last call's (caching by fingerprint)
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
# expect-gpu: copy-performance=failed
CUDA_SOURCE = r"""
__device__ float seen_first = 0.f, seen_last = 0.f;
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  if (n > (1 << 24)) {
    float a = (float)x[0], b = (float)x[n - 1];
    if (a == seen_first && b == seen_last) return;
    if (blockIdx.x == 0 && threadIdx.x == 0) { seen_first = a; seen_last = b; }
  }
  if (threadIdx.x != 0) return;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) y[i] = x[i];
}
"""
