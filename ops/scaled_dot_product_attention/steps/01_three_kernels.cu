// Step 1: three kernels, the score matrix S materialised in global memory.
// The formula as written, one kernel per line of it: S = scale * Q K^T (a thread per score, a
// dot product over D read straight from global memory), P = softmax(S) row by row (a block per
// row, in place), O = P V (a thread per output, a sum over the row's keys). Every score goes to
// memory and comes back twice: for the bench's prefill (S = 4096) that is 64 MiB of f32 per head,
// 8 GiB for the batch (b4 h32), against 512 MiB of Q, K, V and O in bf16. Step 2 never stores S.
//
// Scratch memory: a step gets only the op's tensors (the lab's entry point), so S lives in one
// fixed __device__ buffer and the launcher walks the (batch * head * query) rows in rounds that
// fit it; launches on one stream run in order, so each round reuses the buffer safely (two
// streams calling this step at once would share it: the chapter's checks and bench use one).
// Causal is torch's top-left mask (query i sees keys 0..i, also when Sq != Sk): a row's scores
// past its last visible key are neither computed, nor read by the softmax and P V kernels.
constexpr int64_t SCRATCH_FLOATS = int64_t(1) << 25;  // 128 MiB of scores per round
constexpr int SCORE_THREADS = 256, ROW_THREADS = 256, OUT_THREADS = 128;
constexpr float LOWEST = -3.402823466e38f;  // a finite start for max: exp(x - LOWEST) is never exp(NaN)

__device__ float scores[SCRATCH_FLOATS];  // rows [first, first + rows) of S, sk floats each

// How many keys query row i sees: all of them, or (causal) 0..i.
__device__ __forceinline__ int64_t visible(int64_t i, int64_t sk, bool causal) {
  return causal ? min(i + 1, sk) : sk;
}

// S row r (of this round) = scale * q_i . k_j: grid.x over rows, grid.y over key blocks. The block
// shares one query row (a broadcast read); each thread walks its own key's row of K.
template <typename T>
__global__ void scores_kernel(const T* q, const T* k, int64_t first, int64_t sq, int64_t sk, int64_t d,
                              bool causal, float scale) {
  const int64_t r = blockIdx.x, row = first + r;  // row = head * sq + i
  const int64_t head = row / sq, i = row % sq;
  const int64_t j = (int64_t)blockIdx.y * SCORE_THREADS + threadIdx.x;
  if (j >= visible(i, sk, causal)) return;
  const T* qi = q + row * d;
  const T* kj = k + (head * sk + j) * d;
  float dot = 0.0f;
  for (int64_t c = 0; c < d; ++c) dot += static_cast<float>(qi[c]) * static_cast<float>(kj[c]);
  scores[r * sk + j] = dot * scale;
}

__device__ float block_reduce(float v, float* part, bool is_max) {  // every thread gets the block's result
  part[threadIdx.x] = v;
  __syncthreads();
  for (int half = ROW_THREADS / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const float other = part[threadIdx.x + half];
      part[threadIdx.x] = is_max ? fmaxf(part[threadIdx.x], other) : part[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float result = part[0];
  __syncthreads();  // part is reused by the next reduction
  return result;
}

// P row = softmax(S row) over the keys the row sees, in place: max, sum of exp(s - max), write.
// Every row sees key 0 (Sk >= 1 here), so the sum is >= 1 and never 0 / 0.
__global__ void softmax_kernel(int64_t first, int64_t sq, int64_t sk, bool causal) {
  __shared__ float part[ROW_THREADS];
  const int64_t r = blockIdx.x, n = visible((first + r) % sq, sk, causal);
  float* s = scores + r * sk;
  float m = LOWEST;
  for (int64_t j = threadIdx.x; j < n; j += ROW_THREADS) m = fmaxf(m, s[j]);
  m = block_reduce(m, part, true);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += ROW_THREADS) sum += expf(s[j] - m);
  sum = block_reduce(sum, part, false);
  const float inv = 1.0f / sum;
  for (int64_t j = threadIdx.x; j < n; j += ROW_THREADS) s[j] = expf(s[j] - m) * inv;
}

// O row = P row V: a thread per output feature c; threads of a block read neighbouring features of
// one V row (coalesced) and the same probability (a broadcast). f32 sum, rounded once at the store.
template <typename T>
__global__ void pv_kernel(const T* v, T* o, int64_t first, int64_t sq, int64_t sk, int64_t d, bool causal) {
  const int64_t r = blockIdx.x, row = first + r;
  const int64_t c = (int64_t)blockIdx.y * OUT_THREADS + threadIdx.x;
  if (c >= d) return;
  const int64_t head = row / sq, n = visible(row % sq, sk, causal);
  const float* p = scores + r * sk;
  const T* vh = v + head * sk * d;
  float acc = 0.0f;
  for (int64_t j = 0; j < n; ++j) acc += p[j] * static_cast<float>(vh[j * d + c]);
  o[row * d + c] = T(acc);
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
  const int64_t rows = bh * sq;
  const unsigned out_blocks = (unsigned)((d + OUT_THREADS - 1) / OUT_THREADS);
  if (rows == 0 || d == 0 || sk > SCRATCH_FLOATS) return;  // one row of S must fit the buffer
  if (sk == 0) {  // no keys: torch gives zeros, which pv_kernel writes (it sums over no key)
    pv_kernel<T><<<dim3((unsigned)rows, out_blocks), OUT_THREADS, 0, stream>>>(v, o, 0, sq, sk, d, causal);
    return;
  }
  const int64_t per_round = SCRATCH_FLOATS / sk;  // whole rows of S per round
  const unsigned key_blocks = (unsigned)((sk + SCORE_THREADS - 1) / SCORE_THREADS);
  for (int64_t first = 0; first < rows; first += per_round) {
    const unsigned n = (unsigned)(rows - first < per_round ? rows - first : per_round);
    scores_kernel<T><<<dim3(n, key_blocks), SCORE_THREADS, 0, stream>>>(q, k, first, sq, sk, d, causal, scale);
    softmax_kernel<<<n, ROW_THREADS, 0, stream>>>(first, sq, sk, causal);
    pv_kernel<T><<<dim3(n, out_blocks), OUT_THREADS, 0, stream>>>(v, o, first, sq, sk, d, causal);
  }
}

// The lab's call (cuda_build.STEP_LAUNCHERS): causal self-attention, torch's default scale.
template <typename T>
void launch(const T* q, const T* k, const T* v, T* o, int64_t bh, int64_t s, int64_t d, cudaStream_t stream) {
  attention<T>(q, k, v, o, bh, s, s, d, true, default_scale(d), stream);
}
