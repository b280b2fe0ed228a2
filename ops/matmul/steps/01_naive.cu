// Step 1: one output per thread.
// Thread (row, col) computes C[row, col] = sum over i of A[row, i] * B[i, col] in a float
// register and rounds it once to T. threadIdx.x walks the columns, so the 32 threads of a warp
// read one element of A (a broadcast) and 32 neighbouring elements of B's row i (coalesced) per
// multiply-add: no load is wasted, but every multiply-add loads two elements. Each element of A
// is loaded N times and each of B M times, and the caches, not the arithmetic units, set the
// speed: 2 FLOP per 8 bytes loaded in f32, far left of the roofline's ridge.
constexpr int COLS = 32, ROWS = 8;  // a 256-thread block covers a 8 x 32 patch of C

template <typename T>
__global__ void matmul_naive(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  const int64_t row = (int64_t)blockIdx.y * ROWS + threadIdx.y;
  const int64_t col = (int64_t)blockIdx.x * COLS + threadIdx.x;
  if (row >= m || col >= n) return;  // the edge blocks' spare threads own no output
  float sum = 0.0f;                  // K = 0 still stores the 0 it starts from
  for (int64_t i = 0; i < k; ++i) sum += static_cast<float>(a[row * k + i]) * static_cast<float>(b[i * n + col]);
  c[row * n + col] = T(sum);
}

template <typename T>
void launch(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  dim3 grid((unsigned)((n + COLS - 1) / COLS), (unsigned)((m + ROWS - 1) / ROWS));
  matmul_naive<T><<<grid, dim3(COLS, ROWS), 0, stream>>>(a, b, c, m, n, k);
}
