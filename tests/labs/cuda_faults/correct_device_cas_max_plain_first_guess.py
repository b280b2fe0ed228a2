# what: correct reduce_sum that also keeps the largest row sum ever seen in a __device__ float (a statistic, never reset, never read into y) through the usual early-exit CAS-loop atomic max
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
__device__ float largest_row_sum = -INFINITY;

__device__ float atomicMaxFloat(float* addr, float value) {
  int* a = reinterpret_cast<int*>(addr);
  int old = *a;
  while (value > __int_as_float(old)) {
    const int assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(value));
    if (old == assumed) break;
  }
  return __int_as_float(old);
}

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
    atomicMaxFloat(&largest_row_sum, s);
  }
}
"""
