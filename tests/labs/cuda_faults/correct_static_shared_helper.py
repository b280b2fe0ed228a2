# what: correct reduce_sum whose block-reduce helper keeps its warp totals in a `static __shared__` array (nvcc takes it; the CPU build once read `static static` and refused it) (a false-positive hunt's case)
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
// the classic blockReduceSum helper, with its `static __shared__` scratch
__device__ __forceinline__ float warpReduceSum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
  return v;
}
__device__ float blockReduceSum(float v) {
  static __shared__ float shared[32];
  const int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
  v = warpReduceSum(v);
  if (lane == 0) shared[wid] = v;
  __syncthreads();
  v = (threadIdx.x < blockDim.x / 32) ? shared[lane] : 0.f;
  if (wid == 0) v = warpReduceSum(v);
  return v;
}

template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;  // one block per row
  constexpr int UNROLL = 4;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  acc = blockReduceSum(acc);
  if (threadIdx.x == 0) y[blockIdx.x] = T(acc);
}
"""
