# what: correct softmax whose row max is a float atomic max by CAS loop that stops once the stored max is not below its own (`old = *p; while (v > old) ...`): its plain first read once counted as a race with the other threads' CAS (a false-positive hunt's case)
# check: cuda softmax
# says: passed
CUDA_SOURCE = r"""
__device__ inline void merge(float& m, float& s, float m2, float s2) {
  const float grown = fmaxf(m, m2);
  if (grown == -INFINITY) return;  // both empty so far
  s = s * expf(m - grown) + s2 * expf(m2 - grown);
  m = grown;
}

// float atomic max in shared memory: the usual CAS loop that stops as soon as the stored max is not below ours
__device__ float atomicMaxFloat(float* addr, float value) {
  int* a = reinterpret_cast<int*>(addr);
  int old = *a;
  while (value > __int_as_float(old)) {
    const int assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(value));
    if (old == assumed) break;
  }
  return __int_as_float(old);
}

template <typename T>
__global__ void softmax_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* in = x + (int64_t)blockIdx.x * row_len;  // one block per row
  T* out = y + (int64_t)blockIdx.x * row_len;

  // three passes: block max through the CAS-loop atomic max, block sum through atomicAdd, then the output
  __shared__ float row_max, row_sum;
  if (threadIdx.x == 0) { row_max = -INFINITY; row_sum = 0.f; }
  __syncthreads();
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) m = fmaxf(m, static_cast<float>(in[j]));
  atomicMaxFloat(&row_max, m);
  __syncthreads();
  const float mx = row_max;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) s += expf(static_cast<float>(in[j]) - mx);
  atomicAdd(&row_sum, s);
  __syncthreads();
  const float inv = 1.f / row_sum;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) out[j] = T(expf(static_cast<float>(in[j]) - mx) * inv);
}
"""
