# what: correct reduce_sum reading a `static __constant__` table (the CPU build once read `static static` and refused it) (a false-positive hunt's case)
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
// a `static __constant__` table of the butterfly's offsets (file-local constant memory)
static __constant__ int kMasks[5] = {16, 8, 4, 2, 1};

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;  // one block per row
  constexpr int UNROLL = 4;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  for (int k = 0; k < 5; ++k) acc += __shfl_xor_sync(0xffffffffu, acc, kMasks[k]);
  __shared__ float ws[32];
  if ((threadIdx.x & 31) == 0) ws[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < blockDim.x / 32 ? ws[threadIdx.x] : 0.f;
    for (int k = 0; k < 5; ++k) v += __shfl_xor_sync(0xffffffffu, v, kMasks[k]);
    if (threadIdx.x == 0) y[blockIdx.x] = T(v);
  }
}
"""
