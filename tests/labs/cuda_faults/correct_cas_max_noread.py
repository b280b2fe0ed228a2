# what: correct softmax with a float atomic max by CAS loop from -inf: the simulated contention once returned a NaN for -inf and counted block 1's first CAS on its __shared__ max as contending with block 0's (a false-positive hunt's case)
# check: cuda softmax
# says: passed
CUDA_SOURCE = r"""
__device__ inline void merge(float& m, float& s, float m2, float s2) {
  const float grown = fmaxf(m, m2);
  if (grown == -INFINITY) return;  // both empty so far
  s = s * expf(m - grown) + s2 * expf(m2 - grown);
  m = grown;
}
// float atomic max with a CAS loop that needs no plain read: its first guess is the -inf the max starts from,
// and each failed CAS hands back the value to try against next
__device__ void atomicMaxFloat(float* addr, float value) {
  int* a = reinterpret_cast<int*>(addr);
  int old = __float_as_int(-INFINITY);
  while (value > __int_as_float(old)) {
    const int assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(value));
    if (old == assumed) break;
  }
}

template <typename T>
__global__ void softmax_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* in = x + (int64_t)blockIdx.x * row_len;  // one block per row
  T* out = y + (int64_t)blockIdx.x * row_len;
  __shared__ float row_max, row_sum;
  if (threadIdx.x == 0) { row_max = -INFINITY; row_sum = 0.f; }
  __syncthreads();
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) m = fmaxf(m, static_cast<float>(in[j]));
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0) atomicMaxFloat(&row_max, m);
  __syncthreads();
  const float mx = row_max;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) s += expf(static_cast<float>(in[j]) - mx);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(&row_sum, s);
  __syncthreads();
  const float inv = 1.f / row_sum;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) out[j] = T(expf(static_cast<float>(in[j]) - mx) * inv);
}
"""
