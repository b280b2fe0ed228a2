# what: CUDA attention whose causal mask lets query i see key i + 1 (j <= i + 1)
# check: cuda scaled_dot_product_attention
# says: shape (1, 2, 7, 32) float32 | but the last | the causal mask is off
CUDA_SOURCE = r"""
constexpr int BLOCK_M = 64, BLOCK_N = 32, MAX_D = 128;

template <typename T>
__global__ void scaled_dot_product_attention_kernel(const T* __restrict__ q, const T* __restrict__ k,
                                                    const T* __restrict__ v, T* __restrict__ o,
                                                    int64_t bh, int64_t s, int64_t d) {
  const int64_t head = blockIdx.y * s * d;                  // this (batch, head)'s (S, D) matrices
  const int64_t row = (int64_t)blockIdx.x * BLOCK_M + threadIdx.x;  // threads 0..63: one query row each
  const bool mine = threadIdx.x < BLOCK_M && row < s;
  __shared__ float k_tile[BLOCK_N][MAX_D], v_tile[BLOCK_N][MAX_D];
"""
CUDA_SOURCE += r"""
  const float scale = rsqrtf((float)d);
  float qr[MAX_D], acc[MAX_D];
  for (int c = 0; c < d; ++c) {
    qr[c] = mine ? static_cast<float>(q[head + row * d + c]) * scale : 0.f;
    acc[c] = 0.f;
  }
  float m = -INFINITY, l = 0.f;  // running max and sum of exp(score - m)
  const int64_t last = min(s, (int64_t)(blockIdx.x + 1) * BLOCK_M + 1);  // causal: no key past the block's last row
  for (int64_t t = 0; t < last; t += BLOCK_N) {
    for (int64_t idx = threadIdx.x; idx < BLOCK_N * d; idx += blockDim.x) {  // the K/V tiles, 0 past S
      const int64_t j = idx / d, c = idx % d, key = t + j;
      k_tile[j][c] = key < s ? static_cast<float>(k[head + key * d + c]) : 0.f;
      v_tile[j][c] = key < s ? static_cast<float>(v[head + key * d + c]) : 0.f;
    }
    __syncthreads();
    if (mine && t <= row + 1) {
      const int n = (int)min((int64_t)BLOCK_N, min(row + 2, s) - t);  // keys j <= row + 1
      float scores[BLOCK_N], grown = m;
      for (int j = 0; j < n; ++j) {
        float score = 0.f;
        for (int c = 0; c < d; ++c) score += qr[c] * k_tile[j][c];
        scores[j] = score;
        grown = fmaxf(grown, score);
      }
      const float rescale = expf(m - grown);  // the max grew: rescale the sum and the accumulator
      l *= rescale;
      for (int c = 0; c < d; ++c) acc[c] *= rescale;
      m = grown;
      for (int j = 0; j < n; ++j) {
        const float p = expf(scores[j] - m);
        l += p;
        for (int c = 0; c < d; ++c) acc[c] += p * v_tile[j][c];
      }
    }
    __syncthreads();
  }
  if (mine) for (int c = 0; c < d; ++c) o[head + row * d + c] = T(acc[c] / l);
}
"""
