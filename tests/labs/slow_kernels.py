"""Kernels that pass every laptop check of their lab yet crawl on a GPU: the speed estimate
(operator_course/lab/estimate.py) must call them slow, with their hint (tests/grader/
test_speed_estimate.py), and scripts/estimate_vs_gpu.py times them on a GPU beside the estimate."""

# Each thread copies a contiguous chunk of 1024 elements of its own: neighbouring threads are 4096
# bytes apart, so a warp's load touches 32 sectors and uses 4 bytes of each.
STRIDED_COPY = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  constexpr int64_t CHUNK = 1024;  // each thread copies a contiguous chunk of its own
  const int64_t threads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t start = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * CHUNK; start < n; start += threads * CHUNK)
    for (int64_t i = start; i < start + CHUNK && i < n; ++i) y[i] = x[i];
}
"""

# One thread per row (the row index counts threads, not blocks): 8192 threads for 8192 rows.
ROW_PER_THREAD_SOFTMAX = r"""
template <typename T>
__global__ void softmax_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;  // one thread per row
  if (row >= rows) return;
  const T* in = x + row * row_len;
  T* out = y + row * row_len;
  float m = -INFINITY, s = 0.f;
  for (int64_t j = 0; j < row_len; ++j) m = fmaxf(m, static_cast<float>(in[j]));
  for (int64_t j = 0; j < row_len; ++j) s += expf(static_cast<float>(in[j]) - m);
  for (int64_t j = 0; j < row_len; ++j) out[j] = T(expf(static_cast<float>(in[j]) - m) / s);
}
"""

# A block per row, but thread 0 does the row alone.
THREAD_ZERO_SOFTMAX = ROW_PER_THREAD_SOFTMAX.replace(
    "const int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;  // one thread per row\n  if (row >= rows) return;",
    "const int64_t row = blockIdx.x;  // a block per row, and thread 0 does it all\n  if (threadIdx.x != 0) return;")

# Every element an atomicAdd on its row's sum: 8192 atomics on each address.
ATOMIC_REDUCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  if (threadIdx.x == 0) y[blockIdx.x] = T(0.f);
  __syncthreads();
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x)
    atomicAdd(&y[blockIdx.x], x[(int64_t)blockIdx.x * row_len + j]);
}
"""


SLOW = {  # name: (op, source, fragments of the hint)
    "strided_copy": ("copy", STRIDED_COPY, ["each thread reads x with a stride of 4096 bytes (CUDA_SOURCE line 7)",
                                            "32 sectors of 32 B", "1 of 8 bytes fetched used"]),
    "row_per_thread_softmax": ("softmax", ROW_PER_THREAD_SOFTMAX, ["one thread per row", "about 8192 threads have work",
                                                                   "warps per SM in flight"]),
    "thread_zero_softmax": ("softmax", THREAD_ZERO_SOFTMAX, ["one thread per row", "1 thread per block active of 256"]),
    "atomic_reduce": ("reduce_sum", ATOMIC_REDUCE, ["8192 atomicAdds to one address (CUDA_SOURCE line 7)",
                                                    "serialised on that address"]),
}
