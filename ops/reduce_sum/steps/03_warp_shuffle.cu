// Step 3: warp shuffles.
// The 32 threads of a warp can read each other's registers (__shfl_down_sync): five shuffles sum
// a warp's 32 values with no shared memory and no __syncthreads. Only the 8 warp totals go
// through shared memory, and warp 0 sums those with shuffles again: one barrier instead of eight.
template <typename T>
__global__ void reduce_sum_kernel(const T* x, T* y, int64_t rows, int64_t row_len) {
  constexpr int THREADS = 256, WARPS = THREADS / 32;
  __shared__ float warp_sums[WARPS];
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < row_len; j += THREADS) sum += (float)row[j];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_sums[warp] = sum;  // lane 0 holds its warp's total
  __syncthreads();
  if (warp == 0) {
    sum = lane < WARPS ? warp_sums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) y[blockIdx.x] = T(sum);
  }
}

template <typename T>
void launch(const T* x, T* y, int64_t rows, int64_t row_len, cudaStream_t stream) {
  reduce_sum_kernel<T><<<(unsigned)rows, 256, 0, stream>>>(x, y, rows, row_len);
}
