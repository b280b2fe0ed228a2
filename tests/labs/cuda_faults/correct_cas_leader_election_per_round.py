# what: correct reduce_sum over chunks of 256 elements; in each round the threads that found a nonzero element elect a leader with one atomicCAS on a shared word reset to -1 (whoever wins does the round's bookkeeping: a count of nonzero rounds); losers do not retry, by design (they lost the election)
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ int leader;
  __shared__ int nonzero_rounds;
  __shared__ float total;
  if (threadIdx.x == 0) { leader = -1; nonzero_rounds = 0; total = 0.f; }
  __syncthreads();
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float acc = 0.f;
  for (int64_t base = 0; base < row_len; base += blockDim.x) {
    const int64_t j = base + threadIdx.x;
    const float v = j < row_len ? static_cast<float>(row[j]) : 0.f;
    acc += v;
    if (v != 0.f && atomicCAS(&leader, -1, (int)threadIdx.x) == -1) nonzero_rounds += 1;  // only the winner
    __syncthreads();
    if (threadIdx.x == 0) leader = -1;
    __syncthreads();
  }
  atomicAdd(&total, acc);
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = T(total + 0.f * nonzero_rounds);
}
"""
