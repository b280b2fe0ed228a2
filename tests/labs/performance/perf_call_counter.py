# what: the slow kernel that stops working after 3 calls on a big tensor (a __device__ counter)
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
# expect-gpu: copy-performance=failed
CUDA_SOURCE = r"""
__device__ unsigned long long calls_seen = 0;
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  if (n > (1 << 24)) {
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&calls_seen, 1ull);
    if (calls_seen > 3) return;
  }
  if (threadIdx.x != 0) return;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) y[i] = x[i];
}
"""
