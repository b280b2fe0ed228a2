# what: correct reduce_sum whose groups of four lanes exchange partials through shared memory after __syncwarp with the group's own mask: a collective orders the lanes it names, so no race (a reviewer's case against "only full-warp collectives order")
# check: cuda reduce_sum
# says: passed
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  __shared__ float part[256];
  __shared__ float group_sum[64];
  const T* row = x + (int64_t)blockIdx.x * row_len;
  float acc = 0.f;
  for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  part[threadIdx.x] = acc;
  const unsigned lane = threadIdx.x % 32;
  __syncwarp(0xFu << (lane & ~3u));  // the four lanes of this group
  if (lane % 4 == 0)
    group_sum[threadIdx.x / 4] = part[threadIdx.x] + part[threadIdx.x + 1] + part[threadIdx.x + 2] + part[threadIdx.x + 3];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int g = 0; g < 64; ++g) s += group_sum[g];
    y[blockIdx.x] = T(s);
  }
}
"""
