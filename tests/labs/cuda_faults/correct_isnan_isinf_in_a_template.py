# what: correct softmax (one block per row, block max and sum by shuffles) that also counts the rows holding a non-finite value with isnan(v) || isinf(v) in the kernel template (the CPU build lacked them at global scope): per-block flags in a __device__ array, an atomicInc ticket, the last block to arrive counts the flags
# check: cuda softmax
# says: passed
CUDA_SOURCE = r"""
__device__ int row_has_nonfinite[65536];
__device__ unsigned int arrived;
__device__ int nonfinite_rows;

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float ws[32];
  for (int o = 16; o > 0; o >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) ws[threadIdx.x / 32] = v;
  __syncthreads();
  float t = ws[0];
  for (int w = 1; w < (int)(blockDim.x / 32); ++w) t = is_max ? fmaxf(t, ws[w]) : t + ws[w];
  return t;
}

template <typename T>
__global__ void softmax_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ bool last;
  const T* in = x + (int64_t)blockIdx.x * row_len;
  T* out = y + (int64_t)blockIdx.x * row_len;
  float m = -INFINITY;
  int bad = 0;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) {
    const float v = static_cast<float>(in[j]);
    m = fmaxf(m, v);
    bad |= isnan(v) || isinf(v);
  }
  m = block_reduce(m, true);
  const int any_bad = __syncthreads_or(bad);
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) s += expf(static_cast<float>(in[j]) - m);
  s = block_reduce(s, false);
  const float inv = 1.f / s;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) out[j] = T(expf(static_cast<float>(in[j]) - m) * inv);
  if (threadIdx.x == 0) {
    row_has_nonfinite[blockIdx.x] = any_bad;
    __threadfence();
    last = atomicInc(&arrived, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) {
    int mine = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) mine += row_has_nonfinite[b];
    const int total = __syncthreads_count(mine > 0) >= 0 ? (int)block_reduce((float)mine, false) : 0;
    if (threadIdx.x == 0) nonfinite_rows = total;
  }
}
"""
