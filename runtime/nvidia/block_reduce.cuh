// Warp and block reductions, written once for reduce_sum and softmax.
//
//   float s = block_reduce<Sum>(partial, scratch);          // every thread gets the sum
//   MaxSum ms = warp_reduce<OnlineSoftmax>(partial);        // lanes of one warp combine
//
// An Op is a struct with `using Value`, `identity()` and `apply(a, b)` (associative and
// commutative). Values are floats, or MaxSum for the single-pass softmax.
//
// block_reduce contract: every thread of the block calls it (it synchronizes); `scratch`
// is __shared__ Value[32]; blockDim.x is a multiple of 32. Its trailing __syncthreads
// lets the caller reuse `scratch` at once.
#pragma once

#include <cuda_runtime.h>

namespace oprt {

constexpr float kInf = __builtin_huge_valf();

// A running softmax denominator: the maximum seen so far and sum(exp(x - max)).
struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ __forceinline__ MaxSum shfl_xor(MaxSum v, int mask) {
  return {__shfl_xor_sync(0xffffffffu, v.max, mask), __shfl_xor_sync(0xffffffffu, v.sum, mask)};
}

// max in which NaN wins, as torch.max does: a row holding NaN has a NaN maximum.
__device__ __forceinline__ float nan_max(float a, float b) { return (b > a || b != b) ? b : a; }

struct Sum {
  using Value = float;
  __device__ __forceinline__ static float identity() { return 0.f; }
  __device__ __forceinline__ static float apply(float a, float b) { return a + b; }
};

struct NanMax {
  using Value = float;
  __device__ __forceinline__ static float identity() { return -kInf; }
  __device__ __forceinline__ static float apply(float a, float b) { return nan_max(a, b); }
};

// Combining two partial softmax denominators (Milakov & Gimelshein, "Online normalizer
// calculation for softmax", 2018): rescale each sum to the common maximum. A part whose
// maximum already is the common one keeps its sum as is, so -inf and +inf maxima never
// produce exp(inf - inf); NaN maxima propagate, as torch's result is NaN there.
struct OnlineSoftmax {
  using Value = MaxSum;
  __device__ __forceinline__ static MaxSum identity() { return {-kInf, 0.f}; }
  __device__ __forceinline__ static MaxSum apply(MaxSum a, MaxSum b) {
    const float m = nan_max(a.max, b.max);
    const float sa = a.max == m ? a.sum : a.sum * __expf(a.max - m);
    const float sb = b.max == m ? b.sum : b.sum * __expf(b.max - m);
    return {m, sa + sb};
  }
  // Adds one element. exp(v - v) is 1, except for v = +inf where it is NaN, exactly as
  // the three-pass formula sums exp(x - max) with x = max = +inf.
  __device__ __forceinline__ static void add(MaxSum& acc, float v) {
    if (v > acc.max || v != v) {
      acc.sum = acc.sum * __expf(acc.max - v) + __expf(v - v);
      acc.max = v;
    } else if (v != -kInf) {
      acc.sum += __expf(v - acc.max);
    }
  }
};

template <class Op, class V>
__device__ __forceinline__ V warp_reduce(V v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = Op::apply(v, shfl_xor(v, offset));
  return v;
}

template <class Op, class V>
__device__ __forceinline__ V block_reduce(V v, V* scratch) {
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
