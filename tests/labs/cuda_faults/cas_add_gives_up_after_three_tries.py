# what: reduce_sum adding each thread's partial into a shared total with an atomicCAS loop that gives up after 3 tries: right when threads run one at a time (and when every contended CAS failed once here), loses updates on a GPU where 256 threads CAS one word at once (a cheater's)
# check: cuda reduce_sum
# says: atomicCAS not retried | atomicCAS at CUDA_SOURCE line 14 | until one succeeded | retry until it succeeds
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
  int old = *bits;
  for (int tries = 0; tries < 3; ++tries) {
    const int assumed = old;
    old = atomicCAS(bits, assumed, __float_as_int(__int_as_float(assumed) + part));
    if (old == assumed) break;
  }
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = T(total);
}
"""
