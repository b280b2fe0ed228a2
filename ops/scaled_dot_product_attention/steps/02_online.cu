// Step 2: one fused kernel, the online softmax over K/V tiles in shared memory.
// S is never stored. A block owns BM = 64 query rows of one (batch, head) and walks the keys in
// tiles of BN = 32: the block copies the K and V tiles into shared memory (as f32, zeros past Sk),
// then each row scores its 32 keys, and folds them into a running max m, a running sum l of
// exp(s - m) and an output accumulator, all in registers. When a tile raises the max from m to
// m', what was summed so far was taken against m, so l and the accumulator are rescaled by
// exp(m - m') before the tile's terms are added (softmax's step 2, with a vector of sums). Every
// key and value element loaded from global memory now serves 64 query rows; the scores, 8 GiB per
// call at the bench's prefill shape in step 1, stay on chip.
// Two threads per row (adjacent lanes): each holds every other feature of the row's query and
// accumulator (64 + 64 floats in registers at D = 128, where one thread per row would spill), and
// a score is the two half dot products added by a shuffle. Interleaved features put the pair's
// shared-memory reads in neighbouring banks. Causal (top-left, key j <= query i): the block stops
// at the key tile of its last row, and scores past a row's last key are -inf (exp gives 0).
// Head dims up to 128; the production kernel takes larger ones. Everything runs on CUDA cores.
constexpr int BM = 64, BN = 32, MAX_D = 128, HALF = MAX_D / 2, THREADS = 2 * BM;
constexpr float LOWEST = -3.402823466e38f;  // running max's start: finite, so exp(LOWEST - m) is 0, not NaN

template <typename T>
__global__ void __launch_bounds__(THREADS) attention_online(const T* q, const T* k, const T* v, T* o,
                                                             int64_t sq, int64_t sk, int64_t d, bool causal,
                                                             float scale, int64_t tiles) {
  __shared__ float k_tile[BN][MAX_D], v_tile[BN][MAX_D];
  const int64_t head = blockIdx.x / tiles, first_row = blockIdx.x % tiles * BM;
  const int half = threadIdx.x % 2;                      // features half, half + 2, half + 4, ...
  const int64_t row = first_row + threadIdx.x / 2;       // the query row this pair of threads owns
  const bool mine = row < sq;                            // rows past Sq compute on zeros, store nothing
  const T* qh = q + head * sq * d;
  const T* kh = k + head * sk * d;
  const T* vh = v + head * sk * d;

  float qr[HALF], acc[HALF];
#pragma unroll
  for (int i = 0; i < HALF; ++i) {  // a compile-time index keeps both arrays in registers
    const int c = 2 * i + half;
    qr[i] = mine && c < d ? static_cast<float>(qh[row * d + c]) * scale : 0.0f;
    acc[i] = 0.0f;
  }
  float m = LOWEST, l = 0.0f;
  // causal: the block's last row sees keys up to first_row + BM - 1; later tiles are skipped whole
  const int64_t key_end = causal && first_row + BM < sk ? first_row + BM : sk;
  for (int64_t t = 0; t < key_end; t += BN) {
    // the tile is BN whole rows of K (and of V) from key t on: consecutive threads, consecutive elements
    for (int64_t e = threadIdx.x; e < BN * d; e += THREADS) {
      const int64_t key = t + e / d, feature = e % d;
      const bool real = key < sk;
      k_tile[e / d][feature] = real ? static_cast<float>(kh[t * d + e]) : 0.0f;
      v_tile[e / d][feature] = real ? static_cast<float>(vh[t * d + e]) : 0.0f;
    }
    __syncthreads();
    float s[BN], tile_max = LOWEST;
#pragma unroll
    for (int j = 0; j < BN; ++j) {
      float part = 0.0f;
#pragma unroll
      for (int i = 0; i < HALF; ++i)
        if (2 * i + half < d) part += qr[i] * k_tile[j][2 * i + half];
      const float score = part + __shfl_xor_sync(0xffffffffu, part, 1);  // every lane: both halves' sum
      const int64_t key = t + j;
      s[j] = key < sk && (!causal || key <= row) ? score : -INFINITY;
      tile_max = fmaxf(tile_max, s[j]);
    }
    const float m_new = fmaxf(m, tile_max);
    const float shrink = expf(m - m_new);  // 1 when the max did not grow
    l = l * shrink;
#pragma unroll
    for (int i = 0; i < HALF; ++i) acc[i] *= shrink;
#pragma unroll
    for (int j = 0; j < BN; ++j) {
      const float p = expf(s[j] - m_new);  // 0 for a masked key
      l += p;
#pragma unroll
      for (int i = 0; i < HALF; ++i)
        if (2 * i + half < d) acc[i] += p * v_tile[j][2 * i + half];
    }
    m = m_new;
    __syncthreads();  // the next tile overwrites k_tile and v_tile only when every row is done with them
  }
  if (!mine) return;
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;  // Sk = 0: no key, torch's zeros
#pragma unroll
  for (int i = 0; i < HALF; ++i) {
    const int c = 2 * i + half;
    if (c < d) o[(head * sq + row) * d + c] = T(acc[i] * inv);
  }
}

// 1/sqrt(d), torch's default scale, on the host without libm (a lab build may import none):
// Newton's iteration for 1/sqrt, from below (1/d <= 1/sqrt(d)), where it cannot overshoot.
inline float default_scale(int64_t d) {
  double y = 1.0 / (double)d;
  for (int it = 0; it < 64; ++it) y = y * (1.5 - 0.5 * (double)d * y * y);
  return (float)y;
}

// The whole op for (bh, sq, d) queries against (bh, sk, d) keys and values, contiguous.
template <typename T>
void attention(const T* q, const T* k, const T* v, T* o, int64_t bh, int64_t sq, int64_t sk, int64_t d,
               bool causal, float scale, cudaStream_t stream) {
  if (bh == 0 || sq == 0 || d == 0 || d > MAX_D) return;  // d > 128: not this step's (out stays unwritten)
  const int64_t tiles = (sq + BM - 1) / BM;
  attention_online<T><<<(unsigned)(bh * tiles), THREADS, 0, stream>>>(q, k, v, o, sq, sk, d, causal, scale, tiles);
}

// The lab's call (cuda_build.STEP_LAUNCHERS): causal self-attention, torch's default scale.
template <typename T>
void launch(const T* q, const T* k, const T* v, T* o, int64_t bh, int64_t s, int64_t d, cudaStream_t stream) {
  attention<T>(q, k, v, o, bh, s, s, d, true, default_scale(d), stream);
}
