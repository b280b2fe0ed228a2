# what: a correct CUDA copy calling an ordinary (non-inline) __device__ helper: nvcc's host stub for it calls exit(), which the object check must allow
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
CUDA_SOURCE = r"""
__device__ int64_t stride_of_grid() { return (int64_t)gridDim.x * blockDim.x; }

template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride_of_grid()) y[i] = x[i];
}
"""
