// Step 2: private partial sums, then a tree in shared memory.
// Each thread first sums its own strided share of the row in a register: no communication at all
// for row_len / 256 values. Only then do the 256 partial sums meet, in a tree: at each level the
// lower half of the live threads adds the upper half's values, so 256 values take 8 levels (log2),
// with a __syncthreads between levels (a level reads what the previous one wrote).
template <typename T>
__global__ void reduce_sum_kernel(const T* x, T* y, int64_t rows, int64_t row_len) {
  constexpr int THREADS = 256;
  __shared__ float partial[THREADS];
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < row_len; j += THREADS) sum += (float)row[j];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = THREADS / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();  // outside the if: every thread of the block must reach it
  }
  if (threadIdx.x == 0) y[blockIdx.x] = T(partial[0]);
}

template <typename T>
void launch(const T* x, T* y, int64_t rows, int64_t row_len, cudaStream_t stream) {
  reduce_sum_kernel<T><<<(unsigned)rows, 256, 0, stream>>>(x, y, rows, row_len);
}
