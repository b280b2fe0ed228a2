# what: copy whose loop runs while i <= n: thread n writes (and reads) one element past the end
# check: cuda copy
# says: out-of-bounds write | thread (1,0,0) of block (0,0,0) writes y[1] at CUDA_SOURCE line 5 | past the end of the output | check its index against n
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = x[i];
}
"""
