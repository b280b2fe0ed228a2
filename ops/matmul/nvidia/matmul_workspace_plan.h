// What the nvidia matmul keeps in its workspace, decided on the host: which 16-bit operands to copy
// before the tensor-core kernels run and the plan they then see (matmul_pack.cuh makes the copies),
// and how many ways the sm_90 kernel splits K (sm90/matmul_wgmma.cu). Host code only, so a CPU test
// builds it with the C++ compiler (tests/runtime/test_matmul_workspace_plan.py).
#pragma once

#include <algorithm>
#include <cstdint>

#include "matmul_descriptor.h"

namespace oprt::matmul_pack {

constexpr int64_t kRow = 8;         // elements per 16 bytes of a 16-bit dtype
constexpr int64_t kAlign = 256;     // where B's copy starts in the workspace (bytes)

inline int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Whether an operand's strides give 16-byte rows along `inner` (elements of `element_bytes`: 2 unless
// said). (Its pointer is not known here: an operand 2 bytes off a 16-byte boundary, as a[:, 1:], is not
// packed and takes the CUDA-core kernel.)
inline bool rows_ok(int64_t inner_stride, int64_t ld, int64_t outer, int64_t batch_stride, int64_t element_bytes = 2) {
  return inner_stride == 1 && (outer <= 1 || ld * element_bytes % 16 == 0) && batch_stride * element_bytes % 16 == 0;
}

// One operand's copy: `inner` (the dim kept contiguous), `outer` rows of it `ld` elements apart,
// `batches` matrices (1 when the operand is broadcast over the batch).
struct Copy {
  bool needed = false;
  bool k_inner = false;  // K is the contiguous dim of the copy (A row-major, B column-major)
  int64_t inner = 0, outer = 0, ld = 0, batches = 0;
  int64_t bytes() const { return needed ? batches * outer * ld * 2 : 0; }
};

struct Packing {
  Copy a, b;
  int64_t b_offset() const { return round_up(a.bytes(), kAlign); }
  int64_t workspace_bytes() const { return b.needed ? b_offset() + b.bytes() : a.bytes(); }
};

// The copy of an operand with dims (mn, k) of strides (s_mn, s_k): none when a layout already has
// 16-byte rows; else contiguous along whichever dim has unit stride (the copy's reads coalesce),
// K when neither has or both have. A dim of size 1 says nothing by its stride: a (1, 1995) A with
// strides (1, 1999) is copied as one row of K, not as 1995 rows padded from 1 element to 8.
inline Copy plan_copy(int64_t mn, int64_t k, int64_t s_mn, int64_t s_k, int64_t batch_stride, int64_t batch) {
  Copy c;
  if (rows_ok(s_k, s_mn, mn, batch_stride) || rows_ok(s_mn, s_k, k, batch_stride)) return c;
  c.needed = true;
  const bool mn_unit = s_mn == 1 && mn > 1, k_unit = s_k == 1 && k > 1;
  c.k_inner = !(mn_unit && !k_unit);
  c.inner = c.k_inner ? k : mn;
  c.outer = c.k_inner ? mn : k;
  c.ld = round_up(c.inner, kRow);
  c.batches = batch_stride != 0 ? batch : 1;
  return c;
}

// Below this many multiply-adds (M N K) the copies' launches cost more than the CUDA-core kernel
// loses: on an H100 (2026-12-07) packing made 294 x 18 x 20 bf16 take 12.2 us instead of 5.7 and
// 17 x 415 x 97 f16 15.1 instead of 14.0, while 26 x 6850 x 429 bf16 went from 50.8 us to 34.7.
constexpr int64_t kMinPackWork = int64_t{1} << 22;

// What to pack for this call: nothing for f32 (the CUDA-core kernel reads any layout at full
// speed for it), K = 0, an empty output, a small call, or a GPU without tensor cores.
inline Packing plan(const MatmulPlan& p, oprt_dtype dtype, bool tensor_cores) {
  Packing k;
  if (dtype == OPRT_DTYPE_F32 || p.empty() || p.k <= 0 || !tensor_cores) return k;
  if (p.m * p.n * p.k < kMinPackWork) return k;
  const int64_t ab = p.batch > 1 ? p.a_batch : 0, bb = p.batch > 1 ? p.b_batch : 0;
  k.a = plan_copy(p.m, p.k, p.a_m, p.a_k, ab, p.batch);
  k.b = plan_copy(p.n, p.k, p.b_n, p.b_k, bb, p.batch);
  return k;
}

// The source strides a copy walks: along its contiguous dim (inner) and from one of its rows to the next.
struct SourceStrides {
  int64_t inner, outer;
};
inline SourceStrides source_strides(const Copy& c, int64_t s_mn, int64_t s_k) {
  return c.k_inner ? SourceStrides{s_k, s_mn} : SourceStrides{s_mn, s_k};
}

// The plan the kernels see once the operands marked in `k` are their copies in the workspace (the
// operand pointers move to the copies: matmul_pack.cuh's apply).
inline MatmulPlan packed(const Packing& k, MatmulPlan p) {
  if (k.a.needed) {
    p.a_k = k.a.k_inner ? 1 : k.a.ld;
    p.a_m = k.a.k_inner ? k.a.ld : 1;
    p.a_batch = k.a.batches > 1 ? k.a.outer * k.a.ld : 0;
  }
  if (k.b.needed) {
    p.b_k = k.b.k_inner ? 1 : k.b.ld;
    p.b_n = k.b.k_inner ? k.b.ld : 1;
    p.b_batch = k.b.batches > 1 ? k.b.outer * k.b.ld : 0;
  }
  return p;
}

// Split K where the output has few tiles and they are mostly empty (M or N of at most 64 in a 128 x
// 256 tile: decode rows, a narrow N): 1 x 83 x 13113 was one block walking 205 k-tiles on an idle
// GPU (0.01x cuBLAS on an H100, 2026-12-07). Each split gets at least kMinSplitTiles k-tiles, and
// there are at most kMaxSplits and few enough that writing and reading the partials (splits x M x N
// f32) moves at most a quarter of the operands' bytes. Measured there with 5 splits: 8 x 4096 x
// 4096 bf16 0.29x -> 0.79x and 16 x 8192 x 8192 f16 0.61x -> 0.78x, but 128 x 8192 x 8192 f16
// 0.59x -> 0.53x and 1000^3 f16 0.68x -> 0.41x (full tiles; partials of 21 and 20 MB), hence the rules.
constexpr int64_t kMinSplitTiles = 2, kMaxSplits = 32, kSplitMaxMN = 64;

// The same product with the roles of rows and columns swapped: out^T = b^T a^T (M and N, A and B,
// and out's two strides trade places). The skinny kernel sees an output of few columns this way.
inline MatmulPlan transposed(MatmulPlan p) {
  MatmulPlan t = p;
  t.m = p.n, t.n = p.m;
  t.a_batch = p.b_batch, t.a_m = p.b_n, t.a_k = p.b_k;
  t.b_batch = p.a_batch, t.b_k = p.a_k, t.b_n = p.a_m;
  t.o_m = p.o_n, t.o_n = p.o_m;
  return t;
}

// The skinny kernel (matmul_skinny.cuh): outputs of at most kSkinnyRows rows, or of at most that many
// columns (transposed to rows), on CUDA cores. Such a product is a matrix-vector product in all but
// name: it reads each element of B once and does kSkinnyRows multiply-adds with it at most, so B's
// bytes set its time. The tensor-core kernels fill a 128-row tile with one to eight rows there: on an
// H100 (2026-12-07) 1 x 83 x 13113 f16 ran at 0.33x cuBLAS and 8 x 4096 x 4096 bf16 at 0.79x with split-K.
constexpr int64_t kSkinnyRows = 8;
// For 16-bit operands the tensor-core kernels (split-K) stay ahead past 4 rows or 8192 columns: on an H100
// (2026-12-07, same process, ours / cuBLAS in us) the skinny kernel ran 1 x 4096 x 4096 bf16 in 15.5 / 11.8
// (split-K wgmma 43.6), 4 x 4096 x 4096 in 27.4 / 14.0 (43.3), 2 x 4096 x 11008 in 46.9 / 36.0 (104.4), but
// 8 x 4096 x 4096 in 47.5 / 11.2 (42.8), 8 x 14336 x 4096 f16 in 142 / 44 (55), 1 x 50257 x 4096 in 212 / 157
// (159), 1 x 11008 x 4096 in 59.5 / 35.6 (47.0). f32 has no tensor-core kernel: every shape gained (1 x 4096 x
// 4096 28.8 / 30.5, against 504 on the 64 x 64 tiles; 8 x 8192 x 8192 268 / 130, against 1007).
constexpr int64_t kSkinnyRows16 = 4, kSkinnyColumns16 = 8192;
constexpr int64_t kSkinnyThreads = 256;
constexpr int64_t kSkinnyColumnsKContiguous = 32;  // per block: 8 warps of 4 columns, lanes along K
constexpr int64_t kSkinnyColumnsNContiguous = 256;  // per block: 32 lanes of 8 columns, warps along K
// A split's K is a multiple of its form's depth: with lanes along K, one 8-element chunk for each of the 32
// lanes (chunks start 16-byte aligned); with warps along K, 4 rows for each of the 8 warps. (A depth of
// 256 for both left 8 x 1000 x 1000 with 16 blocks on an H100, 41 us against cuBLAS's 11.)
constexpr int64_t kSkinnySplitDepth = 256, kSkinnySplitDepthNContiguous = 32;
constexpr int64_t kSkinnyMaxSplits = 64;

struct Skinny {
  bool on = false;
  bool transposed = false;    // the kernel sees transposed(plan)
  bool n_contiguous = false;  // B (as the kernel sees it) has unit stride along N: lanes along N
  int64_t splits = 1, k_per_split = 0;
};

// Whether the skinny kernel takes this call, and how it splits K: a batch of one whose blocks would
// fill under four per SM splits K into pieces of at least its form's depth, partials summed after.
inline Skinny skinny(const MatmulPlan& p, oprt_dtype dtype, int64_t sms) {
  Skinny s;
  const bool f32 = dtype == OPRT_DTYPE_F32;
  const int64_t rows = f32 ? kSkinnyRows : kSkinnyRows16;
  if (p.empty() || p.k <= 0 || (p.m > rows && p.n > rows)) return s;
  s.transposed = p.m > rows;
  const MatmulPlan q = s.transposed ? transposed(p) : p;
  if (!f32 && q.n > kSkinnyColumns16) return {};
  s.on = true;
  s.n_contiguous = q.b_n == 1 && q.n > 1;
  const int64_t columns = s.n_contiguous ? kSkinnyColumnsNContiguous : kSkinnyColumnsKContiguous;
  const int64_t blocks = (q.n + columns - 1) / columns;
  const int64_t depth = s.n_contiguous ? kSkinnySplitDepthNContiguous : kSkinnySplitDepth;
  int64_t splits = 1;
  if (q.batch == 1)
    splits = std::min<int64_t>({(4 * sms + blocks - 1) / blocks, (q.k + depth - 1) / depth, kSkinnyMaxSplits});
  s.k_per_split = round_up((q.k + splits - 1) / splits, depth);
  s.splits = (q.k + s.k_per_split - 1) / s.k_per_split;
  return s;
}

// What a call keeps in its workspace: the packed operands, then the split-K partials (splits x M x N
// floats). Made the same way by create() (to size it) and by execute() (matmul_cuda.cu).
struct Workspace {
  Packing packing;
  Skinny skinny;  // when on: no packing, and `splits` are the skinny kernel's
  int splits = 1;
  int64_t partials_bytes = 0;
  int64_t partials_offset() const { return round_up(packing.workspace_bytes(), kAlign); }
  int64_t workspace_bytes() const { return splits > 1 ? partials_offset() + partials_bytes : packing.workspace_bytes(); }
};

inline Workspace workspace_for(const Packing& packing, int splits, const MatmulPlan& p) {
  return {packing, {}, splits, splits > 1 ? int64_t{splits} * p.m * p.n * 4 : 0};
}
inline Workspace workspace_for(const Skinny& s, const MatmulPlan& p) {
  Workspace w = workspace_for(Packing{}, static_cast<int>(s.splits), p);
  w.skinny = s;
  return w;
}

// The k-tiles of depth bk that each split of K walks, for `splits` splits.
inline int64_t k_tiles_per_split(int64_t k_tiles, int64_t splits) { return (k_tiles + splits - 1) / splits; }

// How many ways to split K (1: none) for a batch-1 output of bm x bn tiles and k-tiles of bk on a GPU
// of `sms` SMs. Never a split without a k-tile: the count is that of k_tiles_per_split's pieces.
inline int64_t split_k(const MatmulPlan& p, int64_t sms, int64_t bm, int64_t bn, int64_t bk) {
  if (p.batch != 1 || p.empty() || p.k <= 0) return 1;
  const int64_t tiles = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn);
  if (tiles * 2 > sms) return 1;  // half the SMs or more already have a tile
  if (p.m > kSplitMaxMN && p.n > kSplitMaxMN) return 1;  // full tiles: the partials cost more than they save
  const int64_t k_tiles = (p.k + bk - 1) / bk;
  const int64_t operand_bytes = (p.m + p.n) * p.k * 2, partial_bytes = p.m * p.n * 4 * 2;  // written, read
  const int64_t splits = std::min<int64_t>({(sms + tiles - 1) / tiles, k_tiles / kMinSplitTiles, kMaxSplits,
                                            operand_bytes / 4 / partial_bytes});
  if (splits < 2) return 1;
  const int64_t per_split = k_tiles_per_split(k_tiles, splits);
  return (k_tiles + per_split - 1) / per_split;
}

}  // namespace oprt::matmul_pack
