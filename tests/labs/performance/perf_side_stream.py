# what: the slow copy launched on a non-blocking stream of its own (the launcher's cudaGetLastError rewritten by a macro), so the timed stream sees no work: refused, a lab kernel may not redefine what the launcher calls
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
CUDA_SOURCE = r"""
template <typename T>
__global__ void slow_copy(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  if (threadIdx.x != 0) return;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) y[i] = x[i];
}

template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {}

template <typename T>
cudaError_t on_side_stream(const void* x, void* y, int64_t n) {
  static cudaStream_t side = nullptr;
  if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  slow_copy<T><<<1056, 256, 0, side>>>((const T*)x, (T*)y, n);
  return cudaGetLastError();
}
#define cudaGetLastError() on_side_stream<T>(x, y, n)
"""
