# what: CUDA attention whose score accumulator is declared without a value (`float sc;`): a blind student's lab 06 answer, told of empty rows and the running max before
# check: cuda scaled_dot_product_attention
# says: Hint: g++ finds `sc` | read before it is given a value
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
CUDA_SOURCE = CUDA_SOURCE + r"""
  float qr[MAX_D], acc[MAX_D];
  float m = -INFINITY, l = 0.f;
  const float scale = rsqrtf((float)d);
  if (mine) {
    for (int64_t c = 0; c < d; ++c) {
      qr[c] = (float)q[head + row * d + c] * scale;
      acc[c] = 0.f;
    }
  }
  const int64_t first = (int64_t)blockIdx.x * BLOCK_M;
  const int64_t last = (first + BLOCK_M < s ? first + BLOCK_M : s) - 1;  // the block's last row
  for (int64_t t0 = 0; t0 <= last; t0 += BLOCK_N) {
    for (int64_t e = threadIdx.x; e < BLOCK_N * d; e += blockDim.x) {
      const int64_t j = e / d, c = e % d, key = t0 + j;
      k_tile[j][c] = key < s ? (float)k[head + key * d + c] : 0.f;
      v_tile[j][c] = key < s ? (float)v[head + key * d + c] : 0.f;
    }
    __syncthreads();
    if (mine) {
      for (int j = 0; j < BLOCK_N && t0 + j <= row; ++j) {
        float sc;
        for (int64_t c = 0; c < d; ++c) sc += qr[c] * k_tile[j][c];
        const float m_new = fmaxf(m, sc);
        const float alpha = expf(m - m_new);
        const float p = expf(sc - m_new);
        l = l * alpha + p;
        for (int64_t c = 0; c < d; ++c) acc[c] = acc[c] * alpha + p * v_tile[j][c];
        m = m_new;
      }
    }
    __syncthreads();  // SYNC2
  }
  if (mine) {
    for (int64_t c = 0; c < d; ++c) o[head + row * d + c] = (T)(acc[c] / l);
  }
}
"""
