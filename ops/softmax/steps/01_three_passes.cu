// Step 1: three passes over the row.
// The textbook formula, one block per row: pass 1 finds the row's max, pass 2 sums exp(x - max),
// pass 3 writes exp(x - max) / sum. Subtracting the max keeps every exponent <= 0, so exp never
// overflows (exp(89) is inf in float). The row is read from memory three times and written once:
// 16 bytes of traffic per float element where 8 would do. Each block-wide max and sum is a
// shared-memory tree, as in reduce_sum's step 2.
constexpr int THREADS = 256;
constexpr float LOWEST = -3.402823466e38f;  // start max at the lowest finite float: exp(-inf - LOWEST) = 0, never NaN

template <bool IS_MAX>
__device__ float block_reduce(float v, float* scratch) {  // every thread gets the block's max or sum
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int half = THREADS / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      float other = scratch[threadIdx.x + half];
      scratch[threadIdx.x] = IS_MAX ? fmaxf(scratch[threadIdx.x], other) : scratch[threadIdx.x] + other;
    }
    __syncthreads();
  }
  float result = scratch[0];
  __syncthreads();  // scratch is reused by the next reduction
  return result;
}

template <typename T>
__global__ void softmax_kernel(const T* x, T* y, int64_t rows, int64_t row_len) {
  __shared__ float scratch[THREADS];
  const T* in = x + (int64_t)blockIdx.x * row_len;
  T* out = y + (int64_t)blockIdx.x * row_len;
  float m = LOWEST;
  for (int64_t j = threadIdx.x; j < row_len; j += THREADS) m = fmaxf(m, (float)in[j]);  // fmaxf skips NaN: pass 2 sees it
  m = block_reduce<true>(m, scratch);
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < row_len; j += THREADS) s += expf((float)in[j] - m);
  s = block_reduce<false>(s, scratch);
  for (int64_t j = threadIdx.x; j < row_len; j += THREADS) out[j] = T(expf((float)in[j] - m) / s);
}

template <typename T>
void launch(const T* x, T* y, int64_t rows, int64_t row_len, cudaStream_t stream) {
  softmax_kernel<T><<<(unsigned)rows, THREADS, 0, stream>>>(x, y, rows, row_len);
}
