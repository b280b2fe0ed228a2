# what: a CUDA grid-stride copy capped at 4 rounds of the launcher's grid (1056 x 256 x 4 = 1,081,344 elements): every public lab shape, not the grader's longer secret ones
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=pending
# expect-gpu: copy-performance=failed
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int round = 0; round < 4 && i < n; ++round, i += (int64_t)gridDim.x * blockDim.x) y[i] = x[i];
}
"""
