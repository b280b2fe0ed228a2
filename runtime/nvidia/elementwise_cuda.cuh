// Element-wise kernels over an ElementwisePlan: a grid-stride loop, flat when every
// operand is contiguous, otherwise offsets computed from the linear index.
#pragma once

#include "cuda_launch.cuh"
#include "strided_index.h"

namespace oprt {

// fn(off) handles the element at operand offsets off[0..N).
template <int N, class F>
__global__ void elementwise_kernel(ElementwisePlan<N> p, F fn) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += step) {
    int64_t off[N];
    if (p.contiguous) {
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] = i;
    } else {
      p.offsets(i, off);
    }
    fn(off);
  }
}

template <int N, class F>
void launch_elementwise(const ElementwisePlan<N>& p, F fn, oprt_stream stream, const char* name) {
  constexpr int kThreads = 256;
  elementwise_kernel<N><<<grid_for(p.numel, kThreads), kThreads, 0, as_cuda_stream(stream)>>>(p, fn);
  check_launch(name);
}

}  // namespace oprt
