# what: correct reduce_sum keeping a per-row "seen before" byte flag and a per-row __half last sum in __device__ arrays: each block reads and writes only its own byte / its own 16-bit element (neighbours share a 4-byte word)
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
__device__ unsigned char seen_before[65536];
__device__ unsigned short times_summed[65536];

__device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  float t = 0.f;
  for (int w = 0; w < (int)(blockDim.x / 32); ++w) t += warp_sums[w];
  return t;
}

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float part = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) part += static_cast<float>(row[j]);
  const float s = block_sum(part);
  if (threadIdx.x == 0) {
    y[blockIdx.x] = T(s);
    if (!seen_before[blockIdx.x]) seen_before[blockIdx.x] = 1;
    times_summed[blockIdx.x] = times_summed[blockIdx.x] + 1;
  }
}
"""
