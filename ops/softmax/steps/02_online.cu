// Step 2: the online softmax, one read pass for max and sum together.
// Each thread keeps a running max m and a running sum s of exp(x - m). When a new value raises
// the max from m to m', the sum so far was taken against the old max, so it is rescaled:
// s' = s * exp(m - m') + exp(x - m'). Max and sum come out of one read of the row; the write pass
// reads it once more: 12 bytes per float element instead of 16. Two (m, s) pairs combine by the
// same rule, which is how the warp shuffles, and then the 8 warps, merge their partial results.
constexpr int THREADS = 256, WARPS = THREADS / 32;
constexpr float LOWEST = -3.402823466e38f;  // a finite start: exp(LOWEST - LOWEST) = 1, never exp(NaN)

__device__ void merge(float& m, float& s, float m2, float s2) {  // (m, s) <- (m, s) combined with (m2, s2)
  float top = fmaxf(m, m2);
  s = s * expf(m - top) + s2 * expf(m2 - top);
  m = top;
}

template <typename T>
__global__ void softmax_kernel(const T* x, T* y, int64_t rows, int64_t row_len) {
  __shared__ float warp_m[WARPS], warp_s[WARPS];
  const T* in = x + (int64_t)blockIdx.x * row_len;
  T* out = y + (int64_t)blockIdx.x * row_len;
  float m = LOWEST, s = 0.0f;
  for (int64_t j = threadIdx.x; j < row_len; j += THREADS) merge(m, s, (float)in[j], 1.0f);  // one value: (x, 1)
  for (int offset = 16; offset > 0; offset /= 2)
    merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_m[warp] = m, warp_s[warp] = s;
  __syncthreads();
  m = warp_m[0], s = warp_s[0];  // every thread merges the 8 warp results itself: no second barrier
  for (int w = 1; w < WARPS; ++w) merge(m, s, warp_m[w], warp_s[w]);
  for (int64_t j = threadIdx.x; j < row_len; j += THREADS) out[j] = T(expf((float)in[j] - m) / s);
}

template <typename T>
void launch(const T* x, T* y, int64_t rows, int64_t row_len, cudaStream_t stream) {
  softmax_kernel<T><<<(unsigned)rows, THREADS, 0, stream>>>(x, y, rows, row_len);
}
