# what: CUDA reduce_sum whose shared-memory tree stops at s > 1: the odd half of the partials never reaches the result
# check: cuda reduce_sum
# says: shape (7, 5) float32 | Every element is wrong | every sum is finite but wrong | `s > 0`, not `s > 1`
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  __shared__ float part[256];
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 1; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = T(part[0]);
}
"""
