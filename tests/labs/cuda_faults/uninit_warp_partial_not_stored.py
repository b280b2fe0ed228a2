# what: reduce_sum whose warps store their partial sum to shared memory only if they hold part of the row (`threadIdx.x < row_len`), while the first warp adds up all 8 slots: an idle warp's slot is never written (garbage on a GPU; on the CPU no block ever writes it, so it reads 0 and every sum comes out right)
# check: cuda reduce_sum
# says: read of shared memory no thread wrote | thread (0,0,0) of block (0,0,0) reads warp_sums[0] at CUDA_SOURCE line 13 | which no thread of the block wrote: on a GPU it holds garbage | store a partial result in shared memory before it is read back
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  __shared__ float warp_sums[8];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (lane == 0 && threadIdx.x < row_len) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < blockDim.x / 32 ? warp_sums[lane] : 0.f;
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (lane == 0) y[blockIdx.x] = T(acc);
  }
}
"""
