# what: lab 3 Part 2 unrolled by 4 without the leftover loop: a row's last partial round (all of a row shorter than 1024) is never added
# check: cuda reduce_sum
# says: shape (1, 1) float32 | The one element is wrong | a loop that stops one step early or never runs
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  constexpr int UNROLL = 4;
  float part[UNROLL] = {};
  for (int64_t j = threadIdx.x; j + (UNROLL - 1) * blockDim.x < row_len; j += UNROLL * blockDim.x)
    for (int k = 0; k < UNROLL; ++k) part[k] += static_cast<float>(row[j + k * blockDim.x]);
  float total = (part[0] + part[1]) + (part[2] + part[3]);
  for (int mask = 16; mask > 0; mask /= 2) total += __shfl_xor_sync(0xffffffffu, total, mask);
  __shared__ float warp_totals[32];
  if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = total;
  __syncthreads();
  if (threadIdx.x < 32) {
    total = threadIdx.x < blockDim.x / 32 ? warp_totals[threadIdx.x] : 0.f;
    for (int mask = 16; mask > 0; mask /= 2) total += __shfl_xor_sync(0xffffffffu, total, mask);
    if (threadIdx.x == 0) y[blockIdx.x] = T(total);
  }
}
"""
