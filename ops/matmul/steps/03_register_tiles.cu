// Step 3: register tiles, 8 x 8 outputs per thread.
// In step 2 every multiply-add still reads two floats from shared memory. Here a 256-thread
// block owns a 128 x 128 tile of C and each thread 64 of its outputs, rows ty + 16 i and columns
// tx + 16 j (i, j < 8). K is walked 8 at a time: the block copies A's 128 x 8 tile (transposed,
// so a column of it is a row of shared memory) and B's 8 x 128 tile into shared memory, then per
// k each thread reads 8 values of A and 8 of B into registers and does 64 multiply-adds with
// them: 16 shared reads per 64 FMAs instead of 128. A 128 x 128 tile also reads each loaded
// global element 128 times (step 2: 32). Outputs 16 apart, not 8 adjacent ones, keep the shared
// reads conflict-free: a warp's 16 columns are 16 neighbouring floats.
constexpr int BM = 128, BN = 128, BK = 8, THREADS = 256, PER = 8, SPREAD = 16;  // SPREAD x SPREAD threads
constexpr int PAD = 4;  // tile_a's rows padded: a warp's transposed stores hit 32 distinct banks

template <typename T>
__global__ void __launch_bounds__(THREADS) matmul_registers(const T* a, const T* b, T* c, int64_t m, int64_t n,
                                                            int64_t k) {
  __shared__ float tile_a[BK][BM + PAD];  // tile_a[kk][r] = A[row0 + r, k0 + kk]
  __shared__ float tile_b[BK][BN];
  const int t = threadIdx.x, ty = t / SPREAD, tx = t % SPREAD;
  const int64_t row0 = (int64_t)blockIdx.y * BM, col0 = (int64_t)blockIdx.x * BN;
  float acc[PER][PER] = {};
  float a_reg[PER], b_reg[PER];
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    for (int e = t; e < BM * BK; e += THREADS) {  // 4 elements of each tile per thread
      const int r = e / BK, kk = e % BK;            // A: 8 neighbours along K per row
      tile_a[kk][r] = (row0 + r < m && k0 + kk < k) ? static_cast<float>(a[(row0 + r) * k + k0 + kk]) : 0.0f;
      const int kb = e / BN, cb = e % BN;           // B: 128 neighbours along N per row (coalesced)
      tile_b[kb][cb] = (k0 + kb < k && col0 + cb < n) ? static_cast<float>(b[(k0 + kb) * n + col0 + cb]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < BK; ++kk) {
      for (int i = 0; i < PER; ++i) a_reg[i] = tile_a[kk][ty + SPREAD * i];
      for (int j = 0; j < PER; ++j) b_reg[j] = tile_b[kk][tx + SPREAD * j];
      for (int i = 0; i < PER; ++i)
        for (int j = 0; j < PER; ++j) acc[i][j] += a_reg[i] * b_reg[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < PER; ++i) {
    const int64_t row = row0 + ty + SPREAD * i;
    for (int j = 0; j < PER; ++j) {
      const int64_t col = col0 + tx + SPREAD * j;
      if (row < m && col < n) c[row * n + col] = T(acc[i][j]);
    }
  }
}

template <typename T>
void launch(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  dim3 grid((unsigned)((n + BN - 1) / BN), (unsigned)((m + BM - 1) / BM));
  matmul_registers<T><<<grid, THREADS, 0, stream>>>(a, b, c, m, n, k);
}
