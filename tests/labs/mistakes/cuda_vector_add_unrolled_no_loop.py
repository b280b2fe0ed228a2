# what: CUDA vector_add with four elements per thread and no grid-stride loop: one round of the launcher's grid covers 1056 x 256 x 4 elements on a GPU, past the lab's sizes; the CPU check's 24 blocks do not (a laptop student's, passed before)
# check: cuda vector_add
# says: shape (1048579,) | Only the tail is wrong | grid-stride loop
CUDA_SOURCE = r"""
template <typename T>
__global__ void vector_add_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t n) {
  constexpr int UNROLL = 4;
  const int64_t base = (int64_t)blockIdx.x * UNROLL * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < UNROLL; ++k) {
    const int64_t i = base + (int64_t)k * blockDim.x;
    if (i < n) c[i] = a[i] + b[i];
  }
}
"""
