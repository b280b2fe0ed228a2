// Step 2: shared-memory tiles, 32 x 32.
// A 32 x 32 block of threads owns a 32 x 32 tile of C, one output per thread. It walks K a tile
// at a time: each thread copies one element of A's tile and one of B's into shared memory, the
// block waits (__syncthreads: no thread reads a tile before it is whole), every thread does 32
// multiply-adds out of shared memory, and the block waits again (no thread overwrites a tile
// another is still reading). Each element loaded from global memory now serves 32 multiply-adds
// instead of one. Past M, N or K a tile holds 0, which adds nothing, and the store of C is
// guarded. Per multiply-add each thread still reads two floats from shared memory: step 3 cuts that.
// (The lab's kernel is this tiling with 256 threads, so each thread there owns 4 outputs.)
constexpr int TILE = 32;

template <typename T>
__global__ void matmul_shared(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  __shared__ float tile_a[TILE][TILE];  // a warp reads one element of tile_a (a broadcast) and
  __shared__ float tile_b[TILE][TILE];  // 32 neighbours in tile_b's row: no bank conflicts
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = (int64_t)blockIdx.y * TILE + ty, col = (int64_t)blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int64_t kt = 0; kt < k; kt += TILE) {  // kt: the first k of this step's tiles
    tile_a[ty][tx] = (row < m && kt + tx < k) ? static_cast<float>(a[row * k + kt + tx]) : 0.0f;
    tile_b[ty][tx] = (kt + ty < k && col < n) ? static_cast<float>(b[(kt + ty) * n + col]) : 0.0f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) sum += tile_a[ty][i] * tile_b[i][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = T(sum);  // every thread reached both barriers first
}

template <typename T>
void launch(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE));
  matmul_shared<T><<<grid, dim3(TILE, TILE), 0, stream>>>(a, b, c, m, n, k);
}
