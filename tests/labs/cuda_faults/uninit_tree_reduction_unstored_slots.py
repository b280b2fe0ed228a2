# what: reduce_sum as a shared-memory tree whose threads store their partial only `if (tid < row_len)`, while the tree reads all 256 slots: the slots past a short row are never written (garbage on a GPU, zeros on the CPU, so the sums come out right there)
# check: cuda reduce_sum
# says: read of shared memory no thread wrote | thread (0,0,0) of block (0,0,0) reads sdata[0] at CUDA_SOURCE line 12 | which no thread of the block wrote: on a GPU it holds garbage | not `if (i < n) sdata[tid] = x[i]`
CUDA_SOURCE = r"""
template <typename T>
__global__ void reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t row_len) {
  const T* row = x + (int64_t)blockIdx.x * row_len;
  __shared__ float sdata[256];
  const unsigned tid = threadIdx.x;
  float acc = 0.f;
  for (int64_t j = tid; j < row_len; j += blockDim.x) acc += static_cast<float>(row[j]);
  if (tid < row_len) sdata[tid] = acc;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) y[blockIdx.x] = T(sdata[0]);
}
"""
