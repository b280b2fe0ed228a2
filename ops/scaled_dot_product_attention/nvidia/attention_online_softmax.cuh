// The online softmax of one key tile in registers, shared by the tensor-core kernels
// (attention_mma.cuh, sm90/attention_wgmma.cu): both hold scores in the m16n8 accumulator layout,
// a thread's part of rows g and g + 8 (g = lane / 4) in column tiles of 8 keys.
#pragma once

#include <cmath>
#include <cstdint>

namespace oprt {

// The scores are scaled into log2 units (scale * log2 e) so that each exponential is one exp2.
constexpr float kLog2e = 1.4426950408889634f;

// 2^x on the special-function unit alone. exp2f adds a range fix-up (a compare and a multiply) per
// call for results below 2^-126; here they flush to zero: beside the row's max, whose probability is
// 1, they change neither the row sum nor P V.
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// The scores of one key tile s (f32: this thread's NT column tiles of 8 keys of rows g and g + 8),
// keys j0..: scaled into log2 units, keys past a row's last masked (only when the tile crosses some
// row's last key, keys_min; BRANCH picks how, below), each row's max raised, s turned into
// probabilities and added to the row sum l. on_row(r, c) receives each row's factor c = 2^(m_old - m_new) for the accumulator: the
// mma.sync kernel rescales at once, the Hopper kernel keeps it until the previous tile's P V has
// finished with its accumulator. A quad of four threads holds a row: max by two shuffles.
template <int NT, bool BRANCH, class OnRow>
__device__ __forceinline__ void online_softmax_scores(float (&s)[NT * 4], float (&m)[2], float (&l)[2], float scale,
                                                      int64_t j0, int64_t keys_min, const int64_t (&row_keys)[2],
                                                      int t, OnRow&& on_row) {
#pragma unroll
  for (int i = 0; i < NT * 4; ++i) s[i] *= scale;
  const bool crosses = j0 + NT * 8 > keys_min;  // the tile crosses some row's last key
  if constexpr (BRANCH) {
    // Hopper: a branch skips the mask on every tile that does not cross (ptxas predicates the
    // form below on every tile: about 5 instructions per score)
    if (crosses) {
      int limit[2];  // the rows' bounds within the tile, as ints
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int64_t keys = row_keys[r] - j0;
        limit[r] = keys < 0 ? 0 : keys > NT * 8 ? NT * 8 : static_cast<int>(keys);
      }
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (j * 8 + 2 * t + (e & 1) >= limit[e >> 1]) s[4 * j + e] = -INFINITY;
    }
  } else {
    // mma.sync: the branch costs the kernel at 64 x 64 tiles a spill (it runs at its register limit)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (crosses && j0 + j * 8 + 2 * t + (e & 1) >= row_keys[e >> 1]) s[4 * j + e] = -INFINITY;
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {  // row g (elements 0, 1 of each column tile) and row g + 8 (2, 3)
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < NT; ++j) mx = fmaxf(mx, fmaxf(s[4 * j + 2 * r], s[4 * j + 2 * r + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m[r], mx);
    // m_new = -inf: a row that has seen no key yet (past the last query, or a key split before its
    // keys). Subtracting 0 instead keeps every exp2 at exp2(-inf) = 0 (no inf - inf), and the
    // correction 0 leaves its l and o at the zeros they hold.
    const float m_sub = m_new == -INFINITY ? 0.f : m_new;
    const float correction = exp2_ftz(m[r] - m_sub);  // exp2(-inf) = 0 at the row's first keys
    m[r] = m_new;
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 2 * r; e < 2 * r + 2; ++e) {
        float& x = s[4 * j + e];
        x = exp2_ftz(x - m_sub);
        sum += x;
      }
    l[r] = l[r] * correction + sum;
    on_row(r, correction);
  }
}

// Row r of o (this thread's OT column tiles of rows g and g + 8: elements 2r, 2r + 1 of each) times c.
template <int OT>
__device__ __forceinline__ void rescale_row(float (&o)[OT * 4], int r, float c) {
#pragma unroll
  for (int n = 0; n < OT; ++n) o[4 * n + 2 * r] *= c, o[4 * n + 2 * r + 1] *= c;
}

// The scores' softmax and the accumulator's rescale at once, for a kernel whose accumulator is free.
template <int NT, int OT>
__device__ __forceinline__ void online_softmax(float (&s)[NT * 4], float (&o)[OT * 4], float (&m)[2], float (&l)[2],
                                               float scale, int64_t j0, int64_t keys_min,
                                               const int64_t (&row_keys)[2], int t) {
  online_softmax_scores<NT, false>(s, m, l, scale, j0, keys_min, row_keys, t,
                                   [&](int r, float c) { rescale_row<OT>(o, r, c); });
}

}  // namespace oprt
