# what: reduce_sum that casts const away and sums every thread's partial into the input row with a plain +=: on a GPU the threads lose each other's updates (a cheat's race the one-fiber-at-a-time emulator would hide)
# check: cuda reduce_sum
# says: write into an input | writes x[0] at CUDA_SOURCE line | the inputs are read-only
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;  // one block per row
  constexpr int UNROLL = 4;
  if (row_len * (int64_t)sizeof(T) < (int64_t)sizeof(float)) {  // too short for the scratch: one thread
    if (threadIdx.x == 0) { float s = 0.f; for (int64_t j = 0; j < row_len; ++j) s += static_cast<float>(row[j]); y[blockIdx.x] = T(s); }
    return;
  }
  float part = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) part += static_cast<float>(row[j]);
  // the row is read: its first 4 bytes become the block's accumulator (the input is scratch)
  float* acc = reinterpret_cast<float*>(const_cast<T*>(row));
  __syncthreads();
  if (threadIdx.x == 0) *acc = 0.f;
  __syncthreads();
  *acc += part;  // a plain read-modify-write of global memory by all 256 threads: a data race on a GPU
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = T(*acc);
}
"""
