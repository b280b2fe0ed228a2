// scaled_dot_product_attention on the CPU: FlashAttention's loop, tiled for caches, f32 throughout.
//
// Work items are (batch, head, tile of BQ query rows), spread over threads. An item converts its
// query tile to f32 once, then walks the keys it sees in blocks of BK: the key block is packed
// transposed (d-major) and the value block row-major, both f32, so both products run over
// contiguous f32 whatever the operands' dtype and strides. Each product is a small GEMM with an
// MR x NR block of results in registers (as matmul's CPU kernel): the scores S = Q K^T of the tile's
// rows against the block's keys, summed over D, and the accumulator update acc = acc * c + P V,
// summed over the block's keys (no -ffast-math: each sum keeps its order). Between them, per row,
// the online softmax: the running max m and sum l of exp(s - m); when a block raises the max, l
// and the row's accumulator are rescaled by c = exp(m_old - m_new), once per block. The result is
// acc / l, rounded once to out's dtype. Tiles are padded with zeros to whole register blocks (rows
// to MR, keys to NR, Dv to NR), so the micro-kernels have no edge cases.
//
// Causal (torch's top-left mask: row i sees keys 0..i): a tile stops at the keys its last row
// sees, and each row's probabilities past its own keys are 0. Every row sees key 0, so l > 0
// unless Sk = 0, where torch's result (zeros) is written without reading anything.
#include <algorithm>
#include <cmath>
#include <limits>

#include "half_float.h"
#include "parallel_for.h"
#include "scaled_dot_product_attention_descriptor.h"

using namespace oprt;

namespace {
constexpr int64_t BQ = 32;          // query rows per work item (its K/V blocks are reused BQ times)
constexpr int64_t BK = 64;          // keys per block
constexpr int64_t MR = 4, NR = 8;   // register block of the micro-kernels: rows x (keys or value columns)
static_assert(BQ % MR == 0 && BK % NR == 0, "tiles hold whole register blocks");

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// f32 scratch of one worker: q tile [BQ][d], key block [d][BK], value block [BK][dvp], scores and
// then probabilities [BQ][BK], accumulators [BQ][dvp], running max, sum and rescale [BQ] each
// (dvp: Dv padded to NR; D = Dv = 128: 104 KiB).
int64_t scratch_floats(const AttentionPlan& p) {
  const int64_t dvp = round_up(p.dv, NR);
  return BQ * p.d + p.d * BK + BK * dvp + BQ * BK + BQ * dvp + 3 * BQ;
}
int64_t query_tiles(const AttentionPlan& p) { return (p.sq + BQ - 1) / BQ; }
int64_t items(const AttentionPlan& p) { return p.batch * p.heads * query_tiles(p); }
}  // namespace

namespace oprt {
size_t scaled_dot_product_attention_workspace_bytes(AttentionDescriptor& d) {
  const AttentionPlan& p = d.plan;
  if (p.empty() || p.sk == 0) return 0;  // Sk = 0 only writes zeros
  const int64_t workers = std::min<int64_t>(items(p), cpu_threads());
  return static_cast<size_t>(workers * scratch_floats(p)) * sizeof(float);
}
}  // namespace oprt

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// s[MR rows][NR keys] = sum_c q[r][c] * kt[c][j]: q rows of length d, kt rows of length BK.
inline void score_block(const float* q, const float* kt, float* s, int64_t d) {
  float acc[MR][NR] = {};
  for (int64_t c = 0; c < d; ++c) {
    const float* kc = kt + c * BK;
    for (int64_t r = 0; r < MR; ++r) {
      const float qc = q[r * d + c];
      for (int64_t j = 0; j < NR; ++j) acc[r][j] += qc * kc[j];
    }
  }
  for (int64_t r = 0; r < MR; ++r)
    for (int64_t j = 0; j < NR; ++j) s[r * BK + j] = acc[r][j];
}

// acc[MR rows][NR columns] = acc * rescale[r] + sum_{j < kb} p[r][j] * v[j][col]: acc rows of dvp.
inline void value_block(const float* p, const float* v, float* acc, const float* rescale, int64_t kb, int64_t dvp) {
  float a[MR][NR];
  for (int64_t r = 0; r < MR; ++r)
    for (int64_t e = 0; e < NR; ++e) a[r][e] = acc[r * dvp + e] * rescale[r];
  for (int64_t j = 0; j < kb; ++j) {
    const float* vj = v + j * dvp;
    for (int64_t r = 0; r < MR; ++r) {
      const float pj = p[r * BK + j];
      for (int64_t e = 0; e < NR; ++e) a[r][e] += pj * vj[e];
    }
  }
  for (int64_t r = 0; r < MR; ++r)
    for (int64_t e = 0; e < NR; ++e) acc[r * dvp + e] = a[r][e];
}

template <class T>
void attention_tiles(const AttentionPlan& p, const T* q, const T* k, const T* v, T* out, float* scratch) {
  const int64_t tiles = query_tiles(p), d = p.d, dv = p.dv, dvp = round_up(dv, NR);
  const int64_t per_item = BQ * std::max<int64_t>(p.sk, 1) * (d + dv + 1);  // multiply-adds of a full item
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / per_item);
  parallel_for(items(p), grain, [&](int64_t begin, int64_t end, int worker) {
    float* qs = scratch + worker * scratch_floats(p);  // [BQ][d]
    float* kt = qs + BQ * d;                          // [d][BK]: the key block transposed
    float* vs = kt + d * BK;                          // [BK][dvp]
    float* s = vs + BK * dvp;                         // [BQ][BK]: scores, then probabilities
    float* acc = s + BQ * BK;                         // [BQ][dvp]
    float* m = acc + BQ * dvp;                        // [BQ] running max
    float* l = m + BQ;                                // [BQ] running sum of exp(s - m)
    float* rescale = l + BQ;                          // [BQ] this block's exp(m_old - m_new)
    for (int64_t t = begin; t < end; ++t) {
      const int64_t z = t / (p.heads * tiles), h = t / tiles % p.heads, i0 = t % tiles * BQ;
      const int64_t rows = std::min(BQ, p.sq - i0), padded = round_up(rows, MR);
      int64_t qo, ko, vo, oo;
      p.batch_offsets(z, qo, ko, vo, oo);
      const int64_t kv_head = h / p.group;
      const T* qh = q + qo + h * p.q.head;
      const T* kh = k + ko + kv_head * p.k.head;
      const T* vh = v + vo + kv_head * p.v.head;
      T* oh = out + oo + h * p.o.head;
      for (int64_t r = 0; r < padded; ++r)  // rows past the tile's end are zeros
        for (int64_t c = 0; c < d; ++c) qs[r * d + c] = r < rows ? to_float(qh[(i0 + r) * p.q.seq + c * p.q.dim]) : 0.f;
      std::fill(acc, acc + padded * dvp, 0.f);
      std::fill(m, m + padded, kNegInf);
      std::fill(l, l + padded, 0.f);
      const int64_t keys = p.key_end(i0 + rows - 1);  // the tile's last row sees the most
      for (int64_t j0 = 0; j0 < keys; j0 += BK) {
        const int64_t kb = std::min(BK, keys - j0), kbp = round_up(kb, NR);
        for (int64_t j = 0; j < kbp; ++j) {  // keys past the block's end are zeros
          const bool in = j < kb;
          const T* kr = kh + (j0 + j) * p.k.seq;
          for (int64_t c = 0; c < d; ++c) kt[c * BK + j] = in ? to_float(kr[c * p.k.dim]) : 0.f;
          const T* vr = vh + (j0 + j) * p.v.seq;
          float* vd = vs + j * dvp;
          if (!in)
            std::fill(vd, vd + dvp, 0.f);
          else if (p.v.dim == 1)
            for (int64_t e = 0; e < dv; ++e) vd[e] = to_float(vr[e]);
          else
            for (int64_t e = 0; e < dv; ++e) vd[e] = to_float(vr[e * p.v.dim]);
          if (in) std::fill(vd + dv, vd + dvp, 0.f);
        }
        for (int64_t r = 0; r < padded; r += MR)
          for (int64_t j = 0; j < kbp; j += NR) score_block(qs + r * d, kt + j, s + r * BK + j, d);
        for (int64_t r = 0; r < padded; ++r) {
          float* sr = s + r * BK;
          // keys of this block row r sees (none for a padding row, or a causal row above the block)
          const int64_t jn = r < rows ? std::max<int64_t>(0, std::min(kb, p.key_end(i0 + r) - j0)) : 0;
          float block_max = kNegInf;
          for (int64_t j = 0; j < jn; ++j) {
            sr[j] *= p.scale;
            block_max = std::max(block_max, sr[j]);
          }
          const float m_new = std::max(m[r], block_max);
          // m_new = -inf: nothing seen yet (or only scores of -inf, from infinite inputs): they add
          // nothing; a row with nothing else is 0 / 0 = NaN, as in torch
          if (m_new == kNegInf) {
            std::fill(sr, sr + kb, 0.f);
            rescale[r] = 1.f;
            continue;
          }
          rescale[r] = std::exp(m[r] - m_new);  // exp(-inf) = 0 on the row's first keys
          float sum = 0.f;
          for (int64_t j = 0; j < jn; ++j) {
            sr[j] = std::exp(sr[j] - m_new);
            sum += sr[j];
          }
          std::fill(sr + jn, sr + kb, 0.f);
          l[r] = l[r] * rescale[r] + sum;
          m[r] = m_new;
        }
        for (int64_t r = 0; r < padded; r += MR)
          for (int64_t e = 0; e < dvp; e += NR) value_block(s + r * BK, vs + e, acc + r * dvp + e, rescale + r, kb, dvp);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const float* ar = acc + r * dvp;
        T* orow = oh + (i0 + r) * p.o.seq;
        for (int64_t e = 0; e < dv; ++e) orow[e * p.o.dim] = from_float<T>(ar[e] / l[r]);
      }
    }
  });
}

// Sk = 0: every row is an empty softmax over no keys; torch returns zeros there.
template <class T>
void fill_zeros(const AttentionPlan& p, T* out) {
  const int64_t rows = p.batch * p.heads * p.sq;
  parallel_for(rows, std::max<int64_t>(1, (int64_t{1} << 16) / p.dv), [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t qo, ko, vo, oo;
      p.batch_offsets(r / (p.heads * p.sq), qo, ko, vo, oo);
      T* row = out + oo + r / p.sq % p.heads * p.o.head + r % p.sq * p.o.seq;
      for (int64_t e = 0; e < p.dv; ++e) row[e * p.o.dim] = from_float<T>(0.f);
    }
  });
}
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_scaled_dot_product_attention(
    const oprt_scaled_dot_product_attention_descriptor* desc, void* workspace, size_t workspace_size, void* out,
    const void* query, const void* key, const void* value, oprt_stream) {
  return guard([&] {
    const auto& d = begin_execute<AttentionDescriptor>(desc, workspace, workspace_size);
    const AttentionPlan& p = d.plan;
    if (p.empty()) return;
    const bool reads_v = require_attention_buffers(p, out, query, key, value);
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      if (!reads_v) return fill_zeros(p, static_cast<T*>(out));
      attention_tiles(p, static_cast<const T*>(query), static_cast<const T*>(key), static_cast<const T*>(value),
                      static_cast<T*>(out), static_cast<float*>(workspace));
    });
  });
}
