// The online softmax of one key tile in registers, shared by the tensor-core kernels
// (attention_mma.cuh, sm90/attention_wgmma.cu): both hold scores in the m16n8 accumulator layout,
// a thread's part of rows g and g + 8 (g = lane / 4) in column tiles of 8 keys.
#pragma once

#include <cmath>
#include <cstdint>

namespace oprt {

// The scores are scaled into log2 units (scale * log2 e) so that each exponential is one exp2f.
constexpr float kLog2e = 1.4426950408889634f;

// The online softmax of one key tile of scores s (f32: this thread's NT column tiles of 8 keys of
// rows g and g + 8), keys j0..: scaled into log2 units, keys past a row's
// last masked (only when the tile crosses some row's last key, keys_min), then each row's max
// raised, s turned into probabilities, the row sum l and the accumulator o rescaled by
// 2^(m_old - m_new). A quad of four threads holds a row: max by two shuffles.
template <int NT, int OT>
__device__ __forceinline__ void online_softmax(float (&s)[NT * 4], float (&o)[OT * 4], float (&m)[2], float (&l)[2],
                                               float scale, int64_t j0, int64_t keys_min,
                                               const int64_t (&row_keys)[2], int t) {
  const bool mask = j0 + NT * 8 > keys_min;
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float& x = s[4 * j + e];
      x *= scale;
      if (mask && j0 + j * 8 + 2 * t + (e & 1) >= row_keys[e >> 1]) x = -INFINITY;
    }
#pragma unroll
  for (int r = 0; r < 2; ++r) {  // row g (elements 0, 1 of each column tile) and row g + 8 (2, 3)
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < NT; ++j) mx = fmaxf(mx, fmaxf(s[4 * j + 2 * r], s[4 * j + 2 * r + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m[r], mx);
    // m_new = -inf: a row that has seen no key yet (past the last query, or a key split before
    // its keys): nothing to add
    const bool none = m_new == -INFINITY;
    const float correction = none ? 1.f : exp2f(m[r] - m_new);  // exp2(-inf) = 0 at the row's first keys
    m[r] = m_new;
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 2 * r; e < 2 * r + 2; ++e) {
        float& x = s[4 * j + e];
        x = none ? 0.f : exp2f(x - m_new);
        sum += x;
      }
    l[r] = l[r] * correction + sum;
#pragma unroll
    for (int n = 0; n < OT; ++n) o[4 * n + 2 * r] *= correction, o[4 * n + 2 * r + 1] *= correction;
  }
}

}  // namespace oprt
