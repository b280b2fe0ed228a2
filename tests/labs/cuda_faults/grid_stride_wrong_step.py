# what: copy whose grid-stride loop steps by blockDim.x instead of gridDim.x * blockDim.x: blocks overlap, every element is written by several threads (the output is right, the traffic is not)
# check: cuda copy
# says: two threads write one output element | thread (0,0,0) of block (1,0,0) writes y[256] at CUDA_SOURCE line 4 | of block (0,0,0) wrote too | gridDim.x * blockDim.x
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x) y[i] = x[i];
}
"""
