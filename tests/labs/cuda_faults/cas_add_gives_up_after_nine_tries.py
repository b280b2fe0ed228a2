# what: a cheater's shared-total CAS add loop that re-reads the word and gives up after 9 tries: on a GPU 256 threads contend and a thread may fail up to 255 times (lost updates); a contended CAS failed at most 8 times here, now 1 to 32
# check: cuda reduce_sum
# says: atomicCAS not retried | retry until it succeeds
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
  for (int tries = 0; tries < 9; ++tries) {
    const int old = *bits;
    if (atomicCAS(bits, old, __float_as_int(__int_as_float(old) + part)) == old) break;
  }
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = T(total);
}
"""
