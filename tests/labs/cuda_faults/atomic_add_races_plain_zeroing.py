# what: reduce_sum where warp 0 zeroes y[b] with a plain store and warp 1 adds the total with an atomic, no barrier between: on a GPU the zero may land after the add (a cheater's; atomics were left out of the output checks)
# check: cuda reduce_sum
# says: adds into y[0] with an atomic | stored with nothing ordering the two | before any thread adds into it
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;  // one block per row
  constexpr int UNROLL = 4;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int mask = 16; mask > 0; mask /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, mask);
  __shared__ float warp_totals[32];
  if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = acc;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < (int)(blockDim.x / 32); ++w) total += warp_totals[w];
  // warp 0 zeroes the output with a plain store, warp 1 adds the total with an atomic, and no barrier
  // orders the two: on a GPU the zero may land after the add (the row's sum is lost)
  if (threadIdx.x == 0) y[blockIdx.x] = T(0.f);
  if (threadIdx.x == 32) atomicAdd(y + blockIdx.x, T(total));
}
"""
