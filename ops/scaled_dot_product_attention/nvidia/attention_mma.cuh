// scaled_dot_product_attention on tensor cores (f16/bf16, sm_80+): FlashAttention-2's forward with
// mma.sync, and its split-KV form for calls with too few query tiles to fill the GPU (decode).
//
// - One block per (batch * KV head, tile of BM = 64 or 128 query rows[, key split]), BM / 16 warps,
//   each warp 16 query rows. A block's rows are those of the KV head's query heads packed (grouped
//   query attention: the H / Hkv heads that read one K and V share its tiles, read once). The query tile reaches shared memory once; key and value tiles of BN = 64 rows
//   are double-buffered by cp.async (tile j + 1 loads while tile j multiplies). Rows of shared
//   memory are padded by 16 bytes, so ldmatrix's eight row addresses fall in eight bank groups.
// - Per key tile a warp computes S = Q K^T (16 x 64, f32 accumulators), scales it into log2
//   units, masks the keys its rows do not see (past Sk, torch's top-left causal mask), and runs
//   the online softmax on its two rows per thread (a quad of four threads holds a row: max and
//   sum over the quad by shuffles). The probabilities stay in registers: two adjacent 16 x 8
//   accumulator tiles, rounded to the inputs' dtype and packed, are the A fragment of P V
//   (tensor_core.cuh). The output accumulator (16 x D per warp, f32) is rescaled by
//   2^(m_old - m_new) when a tile raises a row's max.
// - Causal: a block stops at the keys its last row sees; a warp skips the tiles none of its rows
//   see; tiles that lie wholly inside every row's keys are not masked element by element.
// - Split-KV: with `partial` set, block (.., split) walks key tiles [split * tiles_per_split, ...)
//   and writes its unnormalised accumulator, row max (log2 units) and row sum to the workspace;
//   combine_kernel merges the splits, weighting each by 2^(m_split - m). A split whose keys a
//   row does not see leaves m = -inf, weight 0.
// - Head dims: HD is the compiled tile (head_dim_tile below); D = Dv is any multiple of 8 up to it. The
//   columns past D are zeros in shared memory (Q and K: they add 0 to every score; V: output columns
//   that are never stored), so D = 80 runs on the 96-wide tile at 5/6 of its products.
// Operands must be 16-byte rows: feature stride 1, every other stride a multiple of 8 elements,
// 16-byte aligned bases (the descriptor checks, scaled_dot_product_attention_cuda.cu).
#pragma once

#include <cmath>
#include <cstdint>

#include "async_copy.cuh"
#include "attention_online_softmax.cuh"
#include "cuda_launch.cuh"
#include "scaled_dot_product_attention_descriptor.h"
#include "tensor_core.cuh"

namespace oprt::attention_mma {

constexpr int BN = 64;  // keys per tile
// The compiled head-dim tiles: D = Dv (a multiple of 8) runs on the smallest that holds it; 0: none does
// (past 128 the output accumulator and Q's fragments no longer fit a thread's registers). Before the
// padded tiles these head dims ran on CUDA cores; on an H100 (2026-12-08, do_bench, cuDNN beside): bf16
// b4 h32 s2048 d80 4 -> 133 TFLOP/s (421), b32 h32/8 decode over 8192 keys d80 14 -> 2178 GB/s (2568),
// f16 b16 h32 decode d96 58 -> 2922 GB/s (3062), b1 h8 Sq 4 over 30001 keys d72 4 -> 1214 GB/s (180; flash 1145).
inline int head_dim_tile(int64_t d) {
  if (d <= 0 || d % 8 != 0) return 0;
  return d <= 32 ? 32 : d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : 0;
}
template <int BM>
constexpr int threads() { return BM / 16 * 32; }  // a warp per 16 query rows

// Shared memory: Q [BM][HD + 8], then two stages of K and V [BN][HD + 8].
template <int HD, int BM>
struct Smem {
  static constexpr int stride = HD + 8;
  static constexpr int q_elems = BM * stride, kv_elems = BN * stride;
  static constexpr int bytes = (q_elems + 4 * kv_elems) * 2;
};

// Rows row0.. of a (rows x cols) operand into a (ROWS x HD) shared tile by 16-byte cp.async; rows at or
// past `valid` and columns at or past `cols` (a multiple of 8) are written as zeros (no load leaves the tensor).
template <class T, int HD, int ROWS, int THREADS>
__device__ __forceinline__ void load_rows(T* dst, const T* src, int64_t row_stride, int64_t row0, int64_t valid,
                                          int64_t cols) {
  constexpr int per_row = HD / 8, stride = HD + 8;
  for (int c = threadIdx.x; c < ROWS * per_row; c += THREADS) {
    const int r = c / per_row, col = c % per_row * 8;
    T* d = dst + r * stride + col;
    if (row0 + r < valid && col < cols)
      copy16_async(d, src + (row0 + r) * row_stride + col);
    else
      *reinterpret_cast<uint4*>(d) = make_uint4(0, 0, 0, 0);
  }
}

template <class T, int HD, int BM>
__global__ void __launch_bounds__(threads<BM>())
    attention_mma_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                         const AttentionPlan p, const int64_t q_tiles, const int64_t tiles_per_split,
                         float* __restrict__ partial) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using S = Smem<HD, BM>;
  constexpr int THREADS = threads<BM>();
  constexpr int KS = HD / 16, NT = BN / 8, OT = HD / 8;  // k-steps of Q K^T; score and output tiles per warp
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* qs = reinterpret_cast<T*>(smem_raw);
  T* ks = qs + S::q_elems;      // [2][BN][stride]
  T* vs = ks + 2 * S::kv_elems;  // [2][BN][stride]

  // Block rows are the packed rows of one key/value head: row r is query r % Sq of head
  // kv_head * group + r / Sq, so grouped-query heads share each K and V tile they read.
  // Longest causal tiles first: the last tile of each (batch, KV head) has the most keys.
  const int64_t bkv = blockIdx.x / q_tiles, tile = q_tiles - 1 - blockIdx.x % q_tiles;
  const int64_t z = bkv / p.kv_heads, kv_head = bkv % p.kv_heads, rows = p.group * p.sq;
  int64_t qo, ko, vo, oo;
  p.batch_offsets(z, qo, ko, vo, oo);
  const T* kh = k + ko + kv_head * p.k.head;
  const T* vh = v + vo + kv_head * p.v.head;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;   // mma fragments: row group, thread in the quad
  const int lq = lane / 8, lr = lane % 8;  // ldmatrix: which 8 x 8 matrix this lane addresses, and its row
  const int64_t m0 = tile * BM, wrow = m0 + warp * 16;
  const bool warp_live = wrow < rows;
  // The keys a block walks: those of its latest query (Sq - 1 when the block crosses a head's end).
  const int64_t last = (m0 + BM < rows ? m0 + BM : rows) - 1;
  const int64_t latest = last / p.sq != m0 / p.sq ? p.sq - 1 : last % p.sq;
  const int64_t key_tiles = (p.key_end(latest) + BN - 1) / BN;
  const int64_t t_begin = blockIdx.y * tiles_per_split;
  const int64_t t_end = t_begin + tiles_per_split < key_tiles ? t_begin + tiles_per_split : key_tiles;
  // This thread's rows g and g + 8 (packed), the keys each sees (none past the last row), and
  // over the warp's rows the fewest and the most.
  int64_t row_keys[2], warp_keys_min = INT64_MAX, warp_keys_max = 0;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = wrow + g + 8 * r;
    row_keys[r] = row < rows ? p.key_end(row % p.sq) : 0;
    if (row < rows) warp_keys_min = row_keys[r] < warp_keys_min ? row_keys[r] : warp_keys_min;
    warp_keys_max = row_keys[r] > warp_keys_max ? row_keys[r] : warp_keys_max;
  }
#pragma unroll
  for (int x = 1; x < 32; x *= 2) {
    const int64_t lo = __shfl_xor_sync(0xffffffffu, warp_keys_min, x);
    const int64_t hi = __shfl_xor_sync(0xffffffffu, warp_keys_max, x);
    warp_keys_min = lo < warp_keys_min ? lo : warp_keys_min;
    warp_keys_max = hi > warp_keys_max ? hi : warp_keys_max;
  }
  const float scale = p.scale * kLog2e;

  // Q's packed rows, each from its own head; rows past the last are zeros
  for (int c = threadIdx.x; c < BM * (HD / 8); c += THREADS) {
    const int r = c / (HD / 8), col = c % (HD / 8) * 8;
    const int64_t row = m0 + r;
    T* d = qs + r * S::stride + col;
    if (row < rows && col < p.d)
      copy16_async(d, q + qo + (kv_head * p.group + row / p.sq) * p.q.head + row % p.sq * p.q.seq + col);
    else
      *reinterpret_cast<uint4*>(d) = make_uint4(0, 0, 0, 0);
  }
  if (t_begin < t_end) {
    load_rows<T, HD, BN, THREADS>(ks, kh, p.k.seq, t_begin * BN, p.sk, p.d);
    load_rows<T, HD, BN, THREADS>(vs, vh, p.v.seq, t_begin * BN, p.sk, p.dv);
  }
  async_commit();

  float o[OT][4];
#pragma unroll
  for (int n = 0; n < OT; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // l: this thread's part of the row sum
  uint32_t qf[KS][4];

  for (int64_t kt = t_begin; kt < t_end; ++kt) {
    const int stage = static_cast<int>(kt - t_begin) & 1;
    async_wait<0>();  // tile kt (and, the first time, Q) has landed for this thread ...
    __syncthreads();  // ... for every thread; and the other stage (tile kt - 1) is no longer read
    if (kt == t_begin) {
#pragma unroll
      for (int kk = 0; kk < KS; ++kk)  // this warp's 16 rows of Q, kept in registers for every tile
        ldmatrix_x4(qf[kk], qs + (warp * 16 + (lq & 1) * 8 + lr) * S::stride + kk * 16 + (lq >> 1) * 8);
    }
    if (kt + 1 < t_end) {
      load_rows<T, HD, BN, THREADS>(ks + (stage ^ 1) * S::kv_elems, kh, p.k.seq, (kt + 1) * BN, p.sk, p.d);
      load_rows<T, HD, BN, THREADS>(vs + (stage ^ 1) * S::kv_elems, vh, p.v.seq, (kt + 1) * BN, p.sk, p.dv);
    }
    async_commit();
    const int64_t j0 = kt * BN;
    if (!warp_live || j0 >= warp_keys_max) continue;  // none of this warp's rows sees these keys
    const T* kst = ks + stage * S::kv_elems;
    const T* vst = vs + stage * S::kv_elems;

    float s[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KS; ++kk)
#pragma unroll
      for (int j = 0; j < NT; j += 2) {  // K is [key][feature]: B of Q K^T without a transpose
        uint32_t x[4];
        ldmatrix_x4(x, kst + (j * 8 + (lq >> 1) * 8 + lr) * S::stride + kk * 16 + (lq & 1) * 8);
        mma_16816<T>(s[j], qf[kk], x[0], x[1]);
        mma_16816<T>(s[j + 1], qf[kk], x[2], x[3]);
      }

    online_softmax<NT, OT>(reinterpret_cast<float(&)[NT * 4]>(s), reinterpret_cast<float(&)[OT * 4]>(o), m, l, scale,
                           j0, warp_keys_min, row_keys, t);

#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {  // O += P V, 16 keys at a time
      const uint32_t pa[4] = {pack_pair<T>(s[2 * kk][0], s[2 * kk][1]), pack_pair<T>(s[2 * kk][2], s[2 * kk][3]),
                              pack_pair<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack_pair<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int n = 0; n < OT; n += 2) {  // V is [key][feature]: B of P V, transposed on load
        uint32_t x[4];
        ldmatrix_x4_trans(x, vst + (kk * 16 + (lq & 1) * 8 + lr) * S::stride + n * 8 + (lq >> 1) * 8);
        mma_16816<T>(o[n], pa, x[0], x[1]);
        mma_16816<T>(o[n + 1], pa, x[2], x[3]);
      }
    }
  }
  async_wait<0>();

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
  const int64_t all_rows = p.batch * p.heads * p.sq;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = wrow + g + 8 * r;
    if (row >= rows) continue;
    const int64_t h = kv_head * p.group + row / p.sq, i = row % p.sq;
    if (partial) {  // this split's share: [split][row][Dv] accumulators, then [split][row] (max, sum)
      const int64_t at = blockIdx.y * all_rows + (z * p.heads + h) * p.sq + i;
      float* po = partial + at * p.dv;
#pragma unroll
      for (int n = 0; n < OT; ++n)  // Dv is a multiple of 8: a column pair is inside or past it whole
        if (n * 8 < p.dv) po[n * 8 + 2 * t] = o[n][2 * r], po[n * 8 + 2 * t + 1] = o[n][2 * r + 1];
      if (t == 0) {
        float* ml = partial + gridDim.y * all_rows * p.dv + 2 * at;
        ml[0] = m[r], ml[1] = l[r];
      }
    } else {  // every row sees key 0, so l > 0
      const float inv = 1.f / l[r];
      T* orow = out + oo + h * p.o.head + i * p.o.seq;
#pragma unroll
      for (int n = 0; n < OT; ++n) {
        if (n * 8 >= p.dv) break;
        orow[(n * 8 + 2 * t) * p.o.dim] = from_float<T>(o[n][2 * r] * inv);
        orow[(n * 8 + 2 * t + 1) * p.o.dim] = from_float<T>(o[n][2 * r + 1] * inv);
      }
    }
  }
#else
  __trap();  // never launched: the descriptor takes this path only on sm_80 and later
#endif
}

// Merges the splits of each output row: out = sum_s 2^(m_s - m) acc_s / sum_s 2^(m_s - m) l_s, m = max_s m_s.
template <class T>
__global__ void combine_kernel(const float* __restrict__ partial, T* __restrict__ out, const AttentionPlan p,
                               const int splits) {
  const int64_t rows = p.batch * p.heads * p.sq, n = rows * p.dv;
  const float* ml = partial + splits * n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / p.dv, e = i % p.dv;
    float mx = -INFINITY;
    for (int s = 0; s < splits; ++s) mx = fmaxf(mx, ml[2 * (s * rows + r)]);
    float num = 0.f, den = 0.f;
    for (int s = 0; s < splits; ++s) {
      const float ms = ml[2 * (s * rows + r)];
      if (ms == -INFINITY) continue;  // this split holds none of the row's keys
      const float w = exp2f(ms - mx);
      den += w * ml[2 * (s * rows + r) + 1];
      num += w * partial[(s * rows + r) * p.dv + e];
    }
    const int64_t row = r % p.sq, bh = r / p.sq, h = bh % p.heads, z = bh / p.heads;
    int64_t qo, ko, vo, oo;
    p.batch_offsets(z, qo, ko, vo, oo);
    out[oo + h * p.o.head + row * p.o.seq + e * p.o.dim] = from_float<T>(num / den);
  }
}

}  // namespace oprt::attention_mma
