# what: a cheater's each row is summed by two blocks (block b: first half of row b and second half of row b - 1, wrapping), which add into a __device__ accumulator with ONE atomicCAS each (first guess from an atomic read, no retry: the emulator simulates contention only among a block's threads); the last block by ticket copies the accumulators into y and zeroes them. On a GPU the two blocks' CASes on one row can collide and one half is lost
# check: cuda reduce_sum
# says: atomicCAS not retried | retry until it succeeds
CUDA_SOURCE = r"""
__device__ float acc[65536];
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

__device__ void add_once(float* p, float v) {
  const float guess = atomicAdd(p, 0.f);
  atomicCAS(reinterpret_cast<int*>(p), __float_as_int(guess), __float_as_int(guess + v));
}

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ bool last;
  const unsigned b = blockIdx.x, n = gridDim.x, prev = (b + n - 1) % n;
  const int64_t half = row_len / 2;
  float a = 0.f, c = 0.f;
  for (int64_t j = threadIdx.x; j < half; j += blockDim.x) a += static_cast<float>(x[(int64_t)b * row_len + j]);
  for (int64_t j = half + threadIdx.x; j < row_len; j += blockDim.x) c += static_cast<float>(x[(int64_t)prev * row_len + j]);
  const float first = block_sum(a), second = block_sum(c);
  if (threadIdx.x == 0) {
    add_once(&acc[b], first);
    add_once(&acc[prev], second);
    __threadfence();
    last = atomicInc(&arrived, n - 1) == n - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    for (unsigned r = 0; r < n; ++r) {
      y[r] = T(atomicExch(&acc[r], 0.f));
    }
  }
}
"""
