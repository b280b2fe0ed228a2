// Step 2: a grid-stride loop.
// A fixed grid of 1024 blocks walks the array, each thread stepping by the whole grid's thread
// count: the launch no longer grows with n, each thread's set-up is paid once for many elements,
// and any grid is correct (the loop covers what the grid does not).
template <typename T>
__global__ void vector_add_kernel(const T* a, const T* b, T* c, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    c[i] = T((float)a[i] + (float)b[i]);
}

template <typename T>
void launch(const T* a, const T* b, T* c, int64_t n, cudaStream_t stream) {
  const int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 1024) blocks = 1024;
  vector_add_kernel<T><<<(unsigned)blocks, threads, 0, stream>>>(a, b, c, n);
}
