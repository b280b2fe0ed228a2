# what: the slow kernel, skipping a big call whose input pointer it has seen (caching by pointer)
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
# expect-gpu: copy-performance=failed
CUDA_SOURCE = r"""
__device__ const void* last_input = nullptr;
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  if (n > (1 << 24)) {
    __syncthreads();
    if (last_input == (const void*)x) return;
    if (blockIdx.x == 0 && threadIdx.x == 0) last_input = x;
  }
  if (threadIdx.x != 0) return;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) y[i] = x[i];
}
"""
