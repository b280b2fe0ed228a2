# what: CUDA online softmax whose merge has no guard for two empty pairs: exp(-inf - -inf) = NaN
# check: cuda softmax
# says: shape (1, 1) float32 | NaN where torch | skip the rescale while the max is -inf
CUDA_SOURCE = r"""
__device__ inline void merge(float& m, float& s, float m2, float s2) {
  const float grown = fmaxf(m, m2);
  s = s * expf(m - grown) + s2 * expf(m2 - grown);
  m = grown;
}

template <typename T>
__global__ void softmax_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
"""
CUDA_SOURCE += r"""
  const T* in = x + (int64_t)blockIdx.x * row_len;
  T* out = y + (int64_t)blockIdx.x * row_len;
  float m = -INFINITY, s = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) merge(m, s, static_cast<float>(in[j]), 1.f);
  for (int offset = 16; offset > 0; offset /= 2) {
    const float m2 = __shfl_down_sync(0xffffffffu, m, offset), s2 = __shfl_down_sync(0xffffffffu, s, offset);
    merge(m, s, m2, s2);
  }
  __shared__ float warp_m[32], warp_s[32];
  if (threadIdx.x % 32 == 0) { warp_m[threadIdx.x / 32] = m; warp_s[threadIdx.x / 32] = s; }
  __syncthreads();
  if (threadIdx.x < 32) {
    const bool mine = threadIdx.x < blockDim.x / 32;
    m = mine ? warp_m[threadIdx.x] : -INFINITY;
    s = mine ? warp_s[threadIdx.x] : 0.f;
    for (int offset = 16; offset > 0; offset /= 2) {
      const float m2 = __shfl_down_sync(0xffffffffu, m, offset), s2 = __shfl_down_sync(0xffffffffu, s, offset);
      merge(m, s, m2, s2);
    }
    if (threadIdx.x == 0) { warp_m[0] = m; warp_s[0] = s; }
  }
  __syncthreads();
  m = warp_m[0];
  const float inv = 1.f / warp_s[0];
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) out[j] = T(expf(static_cast<float>(in[j]) - m) * inv);
}
"""
### END SOLUTION
