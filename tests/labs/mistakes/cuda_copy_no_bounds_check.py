# what: CUDA copy without `if (i < n)`: the threads past n write past the end of y
# check: cuda copy
# says: shape (1,) float32 | past the end of the output | check its index against n
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i];
}
"""
