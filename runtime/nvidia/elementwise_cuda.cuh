// Element-wise kernels.
//
// Contiguous operands (the common case) take the packed path: 16-byte loads and stores,
// a grid-stride loop over a grid sized from the SM count, unaligned heads and tails done
// element by element. Any other layout (transposed, strided, broadcast) takes the
// general path: offsets computed from the linear index through the plan's strides.
#pragma once

#include "cuda_launch.cuh"
#include "strided_index.h"
#include "vector_io.cuh"

namespace oprt {

constexpr int kElementwiseThreads = 256;

// fn(off) handles the element at operand offsets off[0..N).
template <int N, class F>
__global__ void elementwise_kernel(ElementwisePlan<N> p, F fn) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += step) {
    int64_t off[N];
    p.offsets(i, off);
    fn(off);
  }
}

template <int N, class F>
void launch_elementwise(const ElementwisePlan<N>& p, F fn, oprt_stream stream, const char* name) {
  auto* kernel = elementwise_kernel<N, F>;
  kernel<<<resident_grid(kernel, kElementwiseThreads, p.numel, kElementwiseThreads), kElementwiseThreads, 0,
           as_cuda_stream(stream)>>>(p, fn);
  check_launch(name);
}

struct Identity {
  __device__ __forceinline__ float operator()(float v) const { return v; }
};

template <class TO, class TI, class F>
__global__ void map_contiguous_kernel(TO* __restrict__ out, const TI* __restrict__ in, int64_t n, F f) {
  map_row(out, in, n, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x, f);
}

template <class T, class F>
__global__ void zip_contiguous_kernel(T* __restrict__ out, const T* __restrict__ a, const T* __restrict__ b,
                                      int64_t n, F f) {
  zip_row(out, a, b, n, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x, f);
}

// Enough threads that each handles a batch of 16-byte packs, no more than fit at once.
template <class Kernel>
unsigned packed_grid(Kernel* kernel, int64_t n, int pack) {
  return resident_grid(kernel, kElementwiseThreads, (n + pack - 1) / pack, int64_t{kElementwiseThreads} * kBatch);
}

}  // namespace oprt
