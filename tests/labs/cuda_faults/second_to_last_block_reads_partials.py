# what: a cheater's reduce_sum: blocks leave their row sums in a __device__ array and take an atomic ticket they ignore, while block gridDim.x - 2 (the one the emulator ran last when it ran the grid's last block second) copies every partial into y: wrong on a GPU, which runs blocks in any order; here the blocks after the first that wrote __device__ memory run in a random order
# check: cuda reduce_sum
# says: read of a __device__ variable | reads block_sums[ | the last block to arrive
CUDA_SOURCE = r"""
__device__ float block_sums[65536];
__device__ unsigned int arrived;

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
  const unsigned collector = gridDim.x >= 3 ? gridDim.x - 2 : gridDim.x - 1;
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = s;
    __threadfence();
    atomicAdd(&arrived, 1u);  // a ticket nobody reads
  }
  if (blockIdx.x == collector && threadIdx.x == 0)
    for (unsigned b = 0; b < gridDim.x; ++b) y[b] = T(b == blockIdx.x ? s : block_sums[b]);
}
"""
