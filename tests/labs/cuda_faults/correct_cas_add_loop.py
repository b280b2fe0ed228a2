# what: correct reduce_sum adding each thread's partial into a shared total with an atomicCAS retry loop (the float atomicAdd of old GPUs): the simulated contention fails a CAS, the loop retries, no fault
# check: cuda reduce_sum
# says: passed
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
  int old = *bits, assumed;
  do {
    assumed = old;
    old = atomicCAS(bits, assumed, __float_as_int(__int_as_float(assumed) + part));
  } while (old != assumed);
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = T(total);
}
"""
