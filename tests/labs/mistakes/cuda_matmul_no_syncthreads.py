# what: CUDA matmul that loads the shared tiles and multiplies them with no __syncthreads in between: threads read tile elements other threads have not written yet
# check: cuda matmul
# says: shape (1, 1, 1) float32 | data race on shared memory | put a __syncthreads()
CUDA_SOURCE = r"""
template <typename T>
__global__ void matmul_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                              int64_t m, int64_t n, int64_t k) {
  constexpr int TILE = 32;
  __shared__ float a_s[TILE][TILE];
  __shared__ float b_s[TILE][TILE];
  const int col_in_tile = threadIdx.x % TILE, first_row = threadIdx.x / TILE;
  const int64_t row0 = (int64_t)blockIdx.y * TILE, col0 = (int64_t)blockIdx.x * TILE;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int64_t k0 = 0; k0 < k; k0 += TILE) {
    for (int r = first_row; r < TILE; r += 8) {
      const int64_t a_row = row0 + r, a_col = k0 + col_in_tile;
      a_s[r][col_in_tile] = (a_row < m && a_col < k) ? static_cast<float>(a[a_row * k + a_col]) : 0.f;
      const int64_t b_row = k0 + r, b_col = col0 + col_in_tile;
      b_s[r][col_in_tile] = (b_row < k && b_col < n) ? static_cast<float>(b[b_row * n + b_col]) : 0.f;
    }
    for (int kk = 0; kk < TILE; ++kk) {
      const float bv = b_s[kk][col_in_tile];
      for (int i = 0; i < 4; ++i) acc[i] += a_s[first_row + 8 * i][kk] * bv;
    }
  }
  for (int i = 0; i < 4; ++i) {
    const int64_t row = row0 + first_row + 8 * i, col = col0 + col_in_tile;
    if (row < m && col < n) c[row * n + col] = T(acc[i]);
  }
}
"""
