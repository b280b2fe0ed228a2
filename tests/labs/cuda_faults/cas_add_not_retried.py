# what: reduce_sum adding each thread's partial into a shared total with one atomicCAS and no retry loop: right when threads run one at a time, loses updates on a GPU where they CAS at once (a cheater's, or a student's float atomic)
# check: cuda reduce_sum
# says: atomicCAS not retried | atomicCAS at CUDA_SOURCE line 12 | retry until it succeeds
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ float total;
  if (threadIdx.x == 0) total = 0.f;
  __syncthreads();
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float part = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) part += static_cast<float>(row[j]);
  int* bits = reinterpret_cast<int*>(&total);
  const int assumed = *bits;
  atomicCAS(bits, assumed, __float_as_int(__int_as_float(assumed) + part));
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = T(total);
}
"""
