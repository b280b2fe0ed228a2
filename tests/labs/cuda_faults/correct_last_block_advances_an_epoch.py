# what: correct partial slots tagged with a launch epoch so stale slots are never trusted: every block reads the __device__ epoch (plain) before its ticket, the last block (ticket) checks the tags, sums, and advances the epoch for the next launch
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
struct Slot {
  float sum;
  unsigned epoch;
};
__device__ Slot slots[65536];
__device__ unsigned epoch;
__device__ unsigned int arrived;
__device__ float grand_total;
__device__ unsigned stale_slots;

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
  __shared__ bool last;
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float part = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) part += static_cast<float>(row[j]);
  const float s = block_sum(part);
  if (threadIdx.x == 0) {
    y[blockIdx.x] = T(s);
    const unsigned e = epoch;  // read before the ticket: the last block changes it only after every ticket
    Slot mine;
    mine.sum = s;
    mine.epoch = e;
    slots[blockIdx.x] = mine;
    __threadfence();
    last = atomicInc(&arrived, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();
    const unsigned e = epoch;
    float total = 0.f;
    unsigned stale = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) {
      const Slot q = slots[b];
      if (q.epoch == e) total += q.sum; else ++stale;
    }
    grand_total = total;
    stale_slots = stale;
    epoch = e + 1;
  }
}
"""
