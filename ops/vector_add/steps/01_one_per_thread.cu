// Step 1: one element per thread.
// Thread i adds element i, and the grid has one thread per element: a warp's 32 loads of a (and
// of b) touch 32 neighbouring elements, one coalesced line each. The sum is computed in float and
// rounded once to T, as torch does for half and bfloat16 (its "opmath" type).
template <typename T>
__global__ void vector_add_kernel(const T* a, const T* b, T* c, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;  // 64-bit: n may pass 2^31
  if (i < n) c[i] = T((float)a[i] + (float)b[i]);
}

template <typename T>
void launch(const T* a, const T* b, T* c, int64_t n, cudaStream_t stream) {
  const int threads = 256;
  vector_add_kernel<T><<<(unsigned)((n + threads - 1) / threads), threads, 0, stream>>>(a, b, c, n);
}
