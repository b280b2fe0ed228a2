// Step 3: 16-byte vector loads and stores.
// A thread now moves 16 bytes per instruction (4 floats, 8 halves) as one uint4, instead of 4
// or 2 bytes: four to eight times fewer load and store instructions for the same bytes, so the
// memory system sees more bytes in flight per instruction issued. A uint4 access must be 16-byte
// aligned: when both pointers are, the body moves whole vectors and a short element-wise tail
// finishes the last n % V elements; when one is not, every element goes through the tail loop.
template <typename T>
__global__ void copy_kernel(const T* x, T* y, int64_t n) {
  constexpr int V = 16 / sizeof(T);  // elements per 16-byte vector
  const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const bool aligned = ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % 16) == 0;
  const int64_t vectors = aligned ? n / V : 0;
  for (int64_t v = first; v < vectors; v += stride)
    reinterpret_cast<uint4*>(y)[v] = reinterpret_cast<const uint4*>(x)[v];
  for (int64_t i = vectors * V + first; i < n; i += stride) y[i] = x[i];  // the tail
}

template <typename T>
void launch(const T* x, T* y, int64_t n, cudaStream_t stream) {
  const int threads = 256;
  int64_t blocks = (n / (16 / sizeof(T)) + threads - 1) / threads;  // one vector per thread at most
  if (blocks < 1) blocks = 1;
  if (blocks > 1024) blocks = 1024;
  copy_kernel<T><<<(unsigned)blocks, threads, 0, stream>>>(x, y, n);
}
