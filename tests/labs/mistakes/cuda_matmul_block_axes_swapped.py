# what: CUDA matmul that takes its rows from blockIdx.x and columns from blockIdx.y under the lab's grid: the right-edge columns get no block (a blind student's; it was told to guard its edge tile)
# check: cuda matmul
# says: shape (33, 65, 17) float32 | never written | no block covers it | blockIdx.x over N's tiles
CUDA_SOURCE = r"""
template <typename T>
__global__ void matmul_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                              int64_t m, int64_t n, int64_t k) {
  constexpr int TILE = 32;
  __shared__ float a_s[TILE][TILE];
  __shared__ float b_s[TILE][TILE];
  const int col_in_tile = threadIdx.x % TILE, first_row = threadIdx.x / TILE;  // rows first_row + 8 * i
  const int64_t row0 = (int64_t)blockIdx.x * TILE, col0 = (int64_t)blockIdx.y * TILE;
"""
CUDA_SOURCE = CUDA_SOURCE + r"""
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int64_t k0 = 0; k0 < k; k0 += TILE) {
    for (int i = 0; i < 4; ++i) {
      const int r = first_row + 8 * i;
      const int64_t ar = row0 + r, ac = k0 + col_in_tile;
      a_s[r][col_in_tile] = (ar < m && ac < k) ? static_cast<float>(a[ar * k + ac]) : 0.f;
      const int64_t br = k0 + r, bc = col0 + col_in_tile;
      b_s[r][col_in_tile] = (br < k && bc < n) ? static_cast<float>(b[br * n + bc]) : 0.f;
    }
    __syncthreads();
    for (int kk = 0; kk < TILE; ++kk) {
      const float bv = b_s[kk][col_in_tile];
      for (int i = 0; i < 4; ++i) acc[i] += a_s[first_row + 8 * i][kk] * bv;
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const int64_t row = row0 + first_row + 8 * i, col = col0 + col_in_tile;
    if (row < m && col < n) c[row * n + col] = T(acc[i]);
  }
}
"""
