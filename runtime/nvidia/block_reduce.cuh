// Warp and block reductions in f32, written once for reduce_sum and softmax.
//
//   float s = block_reduce<Sum>(partial, scratch);   // every thread of the block gets s
//
// Contract: every thread of the block calls it (it synchronizes); `scratch` is a
// __shared__ float[32]; blockDim.x is a multiple of 32. The trailing __syncthreads lets
// the caller reuse `scratch` for the next reduction immediately.
#pragma once

#include <cuda_runtime.h>

namespace oprt {

struct Sum {
  __device__ __forceinline__ static float identity() { return 0.f; }
  __device__ __forceinline__ static float apply(float a, float b) { return a + b; }
};

// max in which NaN wins, as torch.max does: a row holding NaN has a NaN maximum.
struct NanMax {
  __device__ __forceinline__ static float identity() { return -__int_as_float(0x7f800000); }
  __device__ __forceinline__ static float apply(float a, float b) { return (b > a || b != b) ? b : a; }
};

template <class Op>
__device__ __forceinline__ float warp_reduce(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

template <class Op>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_reduce<Op>(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : Op::identity();
  v = warp_reduce<Op>(v);
  __syncthreads();
  return v;
}

}  // namespace oprt
