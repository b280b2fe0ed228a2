// softmax on NVIDIA GPUs: f32 math, torch's results for rows holding inf or NaN.
//
// choose_strategy() below is the whole decision:
//   contiguous rows (the innermost dim):
//     up to 32 * 32 elements      a warp per row, the row held in registers: one read,
//                                 one write, warp shuffles only
//     up to 512 * 32 elements     a block per row, the row held in registers (32 values
//                                 per thread): one read, one write. 16-bit rows of up to
//                                 32 KiB, rows aligned to 16 bytes: Staged, the same with
//                                 the block's next two rows landing in shared memory
//                                 (cp.async) meanwhile
//     up to 512 * 64 elements     the same with 64 values per thread
//     longer rows                 online softmax (running max and rescaled sum in one
//                                 pass), then a second pass that writes: two reads;
//                                 split over several blocks when rows are fewer than SMs
//   OPRT_SOFTMAX_STRATEGY=old brings back the choice before Staged (see Mode);
//   OPRT_SOFTMAX_STRATEGY=rowgrid reads long 16-byte aligned rows once instead (RowGrid: a
//     co-resident grid, rows cut into pieces of 32 KiB held in shared memory while the row's
//     (max, sum) is combined across blocks). Not the default: on the H200, 256 x 1048576 f32
//     took 1.24 ms against 0.94 ms for the online kernel's two reads (data/bench/goals/).
//   strided rows whose neighbours are adjacent (a leading dim): a thread per row, online
//     pass then write, each warp reading 32 adjacent elements per step
//   anything else: a block per row, three strided passes.
#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

#include <cuda/atomic>

#include "async_copy.cuh"
#include "block_reduce.cuh"
#include "cuda_launch.cuh"
#include "softmax_descriptor.h"
#include "vector_io.cuh"

using namespace oprt;

namespace {

enum class Strategy { WarpCached, BlockCached, BlockCachedWide, Staged, BlockOnline, SplitOnline, RowGrid, Columns, Strided };

// OPRT_SOFTMAX_STRATEGY, read when a descriptor is created (kept in backend_variant):
//   auto    (default) Staged for 16-bit rows it fits
//   old     the strategies before Staged and RowGrid existed, to benchmark against
//   staged  Staged for every dtype it fits (f32 too)
//   rowgrid as auto, and RowGrid for long rows it fits (measured slower so far: see the top)
enum Mode : int { kAuto = 0, kOld = 1, kStagedAll = 2, kRowGrid = 3 };

int mode_from_env() {
  const char* v = env_or("OPRT_SOFTMAX_STRATEGY", "auto");
  for (const auto [name, mode] : {std::pair{"auto", kAuto}, std::pair{"old", kOld}, std::pair{"staged", kStagedAll},
                                  std::pair{"rowgrid", kRowGrid}})
    if (std::strcmp(v, name) == 0) return mode;
  fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_SOFTMAX_STRATEGY=", v, " is not one of auto, old, staged, rowgrid");
}

struct Launch {
  Strategy strategy;
  int threads;
  int64_t splits;  // SplitOnline: blocks per row; RowGrid: pieces per row
  int64_t piece_len = 0;  // RowGrid: elements per piece
  unsigned grid = 0;      // RowGrid: co-resident blocks
};

// Row values each thread holds in registers, and the most threads per block for each
// (65536 registers per SM). Prefetching the next row doubles the registers held: on the
// H200 the lost occupancy cost more than the overlap gained in the block kernels
// (8192x8192 f32: 0.151 ms without, 0.223 ms with), so only the warp kernel prefetches.
constexpr int kCached = 32, kCachedThreads = 512;
constexpr int kCachedWide = 64, kCachedWideThreads = 512;
constexpr int64_t kMinSplitElements = 65536;

// Staged: BlockCached's registers (32 values per thread), plus the block's next rows
// landing in shared memory (cp.async) while it computes this one. BlockCached keeps a
// row in flight per resident block, and registers allow ~4 such blocks per SM: 64 KiB
// in flight for a 16 KiB f16 row, which measured 39% of the copy ceiling at 8192x8192
// on the H200 (f32, 32 KiB rows, reached 86%). Staged keeps kStages - 1 more rows in
// flight per block without holding them in registers.
constexpr int kStages = 3;
constexpr int64_t kStagedMaxRowBytes = 32 * 1024;  // 3 stages of 32 KiB: 2 blocks per SM

// RowGrid: rows too long for registers, read once. The grid is co-resident (a
// cooperative launch); rows are cut into pieces of at most kGridPieceBytes, a block's
// piece waits in its shared memory while the blocks holding the row's other pieces
// publish their (max, sum), then it is written from there. Two buffers per block, so the
// next piece lands while this one waits and is written.
constexpr int kGridThreads = 512;
constexpr int64_t kGridPieceBytes = 32 * 1024;

bool contiguous_rows(const RowPlan& p) { return p.row_len == 1 || (p.in_row_stride == 1 && p.out_row_stride == 1); }

bool neighbours_adjacent(const RowPlan& p) {
  const int last = p.outer_rank - 1;
  return last >= 0 && p.in_outer_strides[last] == 1 && p.out_outer_strides[last] == 1;
}

// Every row of in and out starts at a multiple of `pack` elements from the tensor's start
// (cp.async copies whole 16-byte chunks; the base pointers are checked at execute).
bool rows_pack_aligned(const RowPlan& p, int pack) {
  for (int d = 0; d < p.outer_rank; ++d)
    if (p.outer_shape[d] > 1 && (p.in_outer_strides[d] % pack != 0 || p.out_outer_strides[d] % pack != 0)) return false;
  return true;
}

int dtype_bytes(oprt_dtype dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 2; }

template <class T>
__global__ void softmax_row_grid(RowPlan p, int64_t piece_len, int64_t pieces, const T* __restrict__ x,
                                 T* __restrict__ y, MaxSum* __restrict__ parts, unsigned* __restrict__ arrived);

// Blocks of softmax_row_grid<T> that can all be resident at once (0 when it cannot run).
int row_grid_capacity(oprt_dtype dtype, int sms) {
  int blocks = 0;
  dispatch_dtype(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    blocks = resident_blocks_per_sm(reinterpret_cast<const void*>(softmax_row_grid<T>), kGridThreads,
                                    2 * kGridPieceBytes);
  });
  return blocks * sms;
}

Launch choose_strategy(const RowPlan& p, oprt_dtype dtype, int mode, int sms) {
  if (contiguous_rows(p)) {
    if (p.row_len <= 32 * kCached) return {Strategy::WarpCached, 128, 1};
    const int bytes = dtype_bytes(dtype), pack = 16 / bytes;
    const bool aligned = p.rows == 1 || rows_pack_aligned(p, pack);
    const bool staged = mode == kStagedAll || ((mode == kAuto || mode == kRowGrid) && bytes == 2);
    if (staged && aligned && p.row_len * bytes <= kStagedMaxRowBytes && p.row_len <= int64_t{kCachedThreads} * kCached) {
      const int64_t threads = (p.row_len + kCached - 1) / kCached;
      return {Strategy::Staged, static_cast<int>(std::max<int64_t>(64, (threads + 31) / 32 * 32)), 1};
    }
    for (const auto [values, max_threads, strategy] : {std::tuple{kCached, kCachedThreads, Strategy::BlockCached},
                                                       std::tuple{kCachedWide, kCachedWideThreads, Strategy::BlockCachedWide}}) {
      if (p.row_len <= int64_t{max_threads} * values) {
        const int64_t threads = (p.row_len + values - 1) / values;
        return {strategy, static_cast<int>(std::max<int64_t>(64, (threads + 31) / 32 * 32)), 1};
      }
    }
    if (mode == kRowGrid && aligned) {
      // Pieces of equal length (a multiple of the pack), no more per row than blocks
      // resident: a row's pieces are then all running together, which the wait needs.
      const int64_t max_piece = kGridPieceBytes / bytes;
      int64_t pieces = (p.row_len + max_piece - 1) / max_piece;
      const int64_t piece_len = ((p.row_len + pieces - 1) / pieces + pack - 1) / pack * pack;
      pieces = (p.row_len + piece_len - 1) / piece_len;  // rounding up to the pack may need fewer
      const int capacity = row_grid_capacity(dtype, sms);
      if (pieces <= capacity) {
        const int64_t work = p.rows * pieces;
        return {Strategy::RowGrid, kGridThreads, pieces, piece_len,
                static_cast<unsigned>(std::min<int64_t>(work, capacity))};
      }
    }
    if (p.rows >= sms) return {Strategy::BlockOnline, 1024, 1};
    const int64_t splits = std::clamp<int64_t>(2 * sms / std::max<int64_t>(p.rows, 1), 1,
                                               std::max<int64_t>(1, p.row_len / kMinSplitElements));
    return {splits > 1 ? Strategy::SplitOnline : Strategy::BlockOnline, 1024, splits};
  }
  if (neighbours_adjacent(p)) return {Strategy::Columns, 128, 1};
  return {Strategy::Strided, 256, 1};
}

// RowGrid's workspace: the pieces' (max, sum), then a counter per row.
size_t grid_counters_offset(const RowPlan& p, const Launch& l) {
  return static_cast<size_t>(p.rows * l.splits) * sizeof(MaxSum);
}

size_t partial_bytes(const RowPlan& p, const Launch& l) {
  if (l.strategy == Strategy::SplitOnline) return static_cast<size_t>(p.rows * l.splits) * sizeof(MaxSum);
  if (l.strategy == Strategy::RowGrid) return grid_counters_offset(p, l) + static_cast<size_t>(p.rows) * sizeof(unsigned);
  return 0;
}

// The row values one thread holds: element (k * lanes + lane) * E + e of the row sits in
// v[k][e]. Positions past the row hold -inf, which adds nothing to max or sum.
template <class T, int K>
struct CachedRow {
  static constexpr int E = kPack<T>;
  float v[K][E];

  __device__ __forceinline__ void load(const T* row, int64_t len, bool packed, int lane, int lanes) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int64_t base = (static_cast<int64_t>(k) * lanes + lane) * E;
      if (packed && base + E <= len) {
        const Pack<T, E> p = load_pack<E>(row + base);
#pragma unroll
        for (int e = 0; e < E; ++e) v[k][e] = to_float(p.v[e]);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) v[k][e] = base + e < len ? to_float(row[base + e]) : -kInf;
      }
    }
  }

  // The same values when the row's whole packs already sit in shared memory (`staged`,
  // pack c at staged + c * E, each put there by the thread that now reads it); a partial
  // last pack comes from `row` in global memory.
  __device__ __forceinline__ void load_staged(const T* staged, const T* row, int64_t len, int lane, int lanes) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int64_t base = (static_cast<int64_t>(k) * lanes + lane) * E;
      if (base + E <= len) {
        const Pack<T, E> p = load_pack<E>(staged + base);
#pragma unroll
        for (int e = 0; e < E; ++e) v[k][e] = to_float(p.v[e]);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) v[k][e] = base + e < len ? to_float(row[base + e]) : -kInf;
      }
    }
  }

  __device__ __forceinline__ float max() const {
    float m = -kInf;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int e = 0; e < E; ++e) m = nan_max(m, v[k][e]);
    return m;
  }

  // Replaces each value by exp(value - m) and returns their sum.
  __device__ __forceinline__ float exp_sum(float m) {
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int e = 0; e < E; ++e) {
        v[k][e] = __expf(v[k][e] - m);
        s += v[k][e];
      }
    return s;
  }

  __device__ __forceinline__ void store_scaled(T* row, int64_t len, bool packed, int lane, int lanes, float scale) const {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int64_t base = (static_cast<int64_t>(k) * lanes + lane) * E;
      if (packed && base + E <= len) {
        Pack<T, E> p;
#pragma unroll
        for (int e = 0; e < E; ++e) p.v[e] = from_float<T>(v[k][e] * scale);
        store_pack<E>(row + base, p);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e)
          if (base + e < len) row[base + e] = from_float<T>(v[k][e] * scale);
      }
    }
  }
};

template <class T>
__device__ __forceinline__ bool both_aligned(const T* a, const T* b) {
  return elements_to_alignment<kPack<T>>(a) == 0 && elements_to_alignment<kPack<T>>(b) == 0;
}

// One row's cached values plus where it lives: what a block (or warp) works on.
template <class T, int K>
struct RowTile {
  CachedRow<T, K> values;
  int64_t out_off;
  bool packed;

  // Issues the loads; the values are waited for only when first used, so a tile loaded
  // before the current row's reductions overlaps its memory latency with them.
  __device__ __forceinline__ void load(const RowPlan& p, int64_t row, const T* x, const T* y, int lane, int lanes) {
    int64_t in_off;
    p.row_offsets(row, in_off, out_off);
    packed = both_aligned(x + in_off, y + out_off);
    values.load(x + in_off, p.row_len, packed, lane, lanes);
  }
};

// Softmax of rows first, first + step, ... each cached by the `lanes` threads of a warp;
// Reduce combines their partial max and sum. With Prefetch the next row's loads are
// issued before this row's reductions.
// Rows padded past the row's end hold -inf: for a row whose max is -inf (all -inf) the
// padding's exp(-inf - -inf) is NaN, as is every real element's, which is torch's answer.
template <class T, int K, bool Prefetch, class Reduce>
__device__ __forceinline__ void softmax_cached_rows(const RowPlan& p, const T* x, T* y, int64_t first, int64_t step,
                                                    int lane, int lanes, Reduce&& reduce) {
  if (first >= p.rows) return;
  RowTile<T, K> cur;
  cur.load(p, first, x, y, lane, lanes);
  for (int64_t row = first; row < p.rows; row += step) {
    RowTile<T, K> next;
    const bool more = Prefetch && row + step < p.rows;
    if (more) next.load(p, row + step, x, y, lane, lanes);
    const float m = reduce(NanMax{}, cur.values.max());
    const float s = reduce(Sum{}, cur.values.exp_sum(m));
    cur.values.store_scaled(y + cur.out_off, p.row_len, cur.packed, lane, lanes, 1.f / s);
    if (more) cur = next;
    else if (row + step < p.rows) cur.load(p, row + step, x, y, lane, lanes);
  }
}

template <class T>
__global__ void softmax_warp_cached(RowPlan p, const T* __restrict__ x, T* __restrict__ y) {
  const int warps_per_block = blockDim.x >> 5;
  softmax_cached_rows<T, kCached / kPack<T>, true>(
      p, x, y, static_cast<int64_t>(blockIdx.x) * warps_per_block + (threadIdx.x >> 5),
      static_cast<int64_t>(gridDim.x) * warps_per_block, threadIdx.x & 31, 32,
      [](auto op, float v) { return warp_reduce<decltype(op)>(v); });
}

// The block kernels keep the plain loop (no RowTile, no prefetch): written through
// softmax_cached_rows the 64-value variant spilled registers and ran 4096x32768 f32 in
// 0.55 ms instead of 0.29 ms on the H200.
template <class T, int Values, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads) softmax_block_cached(RowPlan p, const T* __restrict__ x,
                                                                   T* __restrict__ y) {
  constexpr int K = Values / kPack<T>;
  __shared__ float scratch[32];
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    const bool packed = both_aligned(x + in_off, y + out_off);
    CachedRow<T, K> r;
    r.load(x + in_off, p.row_len, packed, threadIdx.x, blockDim.x);
    const float m = block_reduce<NanMax>(r.max(), scratch);
    const float s = block_reduce<Sum>(r.exp_sum(m), scratch);
    r.store_scaled(y + out_off, p.row_len, packed, threadIdx.x, blockDim.x, 1.f / s);
  }
}

// BlockCached with the block's next kStages - 1 rows copied into shared memory while it
// computes this one (a persistent grid: block b takes rows b, b + grid, ...). Each thread
// copies the packs it will hold, so it waits for its own copies only (cp.async.wait_group);
// a stage is refilled one row after it was read, and the block reductions in between
// already order every thread's reads before any refill.
template <class T>
__global__ void __launch_bounds__(kCachedThreads, 2) softmax_staged(RowPlan p, const T* __restrict__ x, T* __restrict__ y) {
  constexpr int E = kPack<T>, K = kCached / E;
  extern __shared__ __align__(16) unsigned char staged_smem[];
  __shared__ float scratch[32];
  const int lane = threadIdx.x, lanes = blockDim.x;
  const int64_t stage_len = p.row_len / E * E;  // the whole packs of a row
  T* const stages = reinterpret_cast<T*>(staged_smem);
  auto issue = [&](int64_t row, int stage) {  // copies row into stage; one commit group either way
    if (row < p.rows) {
      int64_t in_off, out_off;
      p.row_offsets(row, in_off, out_off);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int64_t base = (static_cast<int64_t>(k) * lanes + lane) * E;
        if (base + E <= p.row_len) copy16_async(stages + stage * stage_len + base, x + in_off + base);
      }
    }
    async_commit();
  };
  const int64_t step = gridDim.x;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue(blockIdx.x + s * step, s);
  int stage = 0;
  for (int64_t row = blockIdx.x; row < p.rows; row += step) {
    issue(row + (kStages - 1) * step, (stage + kStages - 1) % kStages);
    async_wait<kStages - 1>();  // every group but the newest kStages - 1: this row's
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    CachedRow<T, K> r;
    r.load_staged(stages + stage * stage_len, x + in_off, p.row_len, lane, lanes);
    const float m = block_reduce<NanMax>(r.max(), scratch);
    const float s = block_reduce<Sum>(r.exp_sum(m), scratch);
    r.store_scaled(y + out_off, p.row_len, true, lane, lanes, 1.f / s);
    stage = (stage + 1) % kStages;
  }
  async_wait<0>();
}

// Online pass over [begin, begin + len) of a row: the piece's (max, sum).
template <class T>
__device__ __forceinline__ MaxSum online_piece(const T* row, int64_t len, float* scratch_raw) {
  MaxSum acc = OnlineSoftmax::identity();
  for_each_in_row(row, len, threadIdx.x, blockDim.x, [&](float v) { OnlineSoftmax::add(acc, v); });
  return block_reduce<OnlineSoftmax>(acc, reinterpret_cast<MaxSum*>(scratch_raw));
}

template <class T>
__device__ __forceinline__ void write_piece(T* out, const T* in, int64_t len, MaxSum total) {
  const float m = total.max, inv = 1.f / total.sum;
  map_row(out, in, len, threadIdx.x, blockDim.x, [=](float v) { return __expf(v - m) * inv; });
}

template <class T>
__global__ void __launch_bounds__(1024) softmax_block_online(RowPlan p, const T* __restrict__ x, T* __restrict__ y) {
  __shared__ float scratch[64];
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    const MaxSum total = online_piece(x + in_off, p.row_len, scratch);
    write_piece(y + out_off, x + in_off, p.row_len, total);
  }
}

// Split rows, step 1: block b computes (max, sum) of piece b % splits of row b / splits.
template <class T>
__global__ void __launch_bounds__(1024) softmax_split_stats(RowPlan p, int64_t splits, const T* __restrict__ x, MaxSum* __restrict__ parts) {
  __shared__ float scratch[64];
  const int64_t piece_len = (p.row_len + splits - 1) / splits;
  for (int64_t b = blockIdx.x; b < p.rows * splits; b += gridDim.x) {
    int64_t in_off, out_off;
    p.row_offsets(b / splits, in_off, out_off);
    const int64_t begin = b % splits * piece_len, len = std::max<int64_t>(0, std::min(piece_len, p.row_len - begin));
    const MaxSum part = online_piece(x + in_off + begin, len, scratch);
    if (threadIdx.x == 0) parts[b] = part;
  }
}

// Split rows, step 2: combine the row's parts, then write this block's piece.
template <class T>
__global__ void __launch_bounds__(1024) softmax_split_write(RowPlan p, int64_t splits, const T* __restrict__ x, T* __restrict__ y,
                                    const MaxSum* __restrict__ parts) {
  __shared__ MaxSum scratch[32];
  const int64_t piece_len = (p.row_len + splits - 1) / splits;
  for (int64_t b = blockIdx.x; b < p.rows * splits; b += gridDim.x) {
    const int64_t row = b / splits;
    MaxSum acc = OnlineSoftmax::identity();
    for (int64_t k = threadIdx.x; k < splits; k += blockDim.x) acc = OnlineSoftmax::apply(acc, parts[row * splits + k]);
    const MaxSum total = block_reduce<OnlineSoftmax>(acc, scratch);
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    const int64_t begin = b % splits * piece_len, len = std::max<int64_t>(0, std::min(piece_len, p.row_len - begin));
    write_piece(y + out_off + begin, x + in_off + begin, len, total);
  }
}

__device__ __forceinline__ MaxSum load_cg(const MaxSum* p) {  // from L2: written by other blocks
  const float2 v = __ldcg(reinterpret_cast<const float2*>(p));
  return {v.x, v.y};
}

// RowGrid: block b takes pieces b, b + grid, ... (piece w is piece w % pieces of row
// w / pieces). Per piece: copy it into shared memory, its (max, sum), publish that and
// count it in the row's counter, prefetch the block's next piece, wait until the row's
// counter reaches `pieces`, combine the row's parts, write the piece from shared memory.
// No deadlock: all blocks are resident (cooperative launch) and pieces <= grid, so the
// blocks holding a row's pieces have each finished their earlier pieces, which belong to
// earlier rows, whose pieces are all done by the same argument (induction on the row).
template <class T>
__global__ void __launch_bounds__(kGridThreads, 3) softmax_row_grid(RowPlan p, int64_t piece_len, int64_t pieces,
                                                                 const T* __restrict__ x, T* __restrict__ y,
                                                                 MaxSum* __restrict__ parts,
                                                                 unsigned* __restrict__ arrived) {
  constexpr int E = kPack<T>;
  extern __shared__ __align__(16) unsigned char grid_smem[];
  __shared__ MaxSum scratch[32];
  T* const buffers = reinterpret_cast<T*>(grid_smem);  // two pieces
  const int64_t work = p.rows * pieces;
  const int tid = threadIdx.x, threads = blockDim.x;
  auto issue = [&](int64_t w, T* buf) {  // copies piece w's whole packs into buf; one commit group
    if (w < work) {
      const int64_t begin = w % pieces * piece_len, len = std::min(piece_len, p.row_len - begin);
      int64_t in_off, out_off;
      p.row_offsets(w / pieces, in_off, out_off);
      const T* src = x + in_off + begin;
      for (int64_t c = tid; c < len / E; c += threads) copy16_async(buf + c * E, src + c * E);
    }
    async_commit();
  };
  int b = 0;
  issue(blockIdx.x, buffers);
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x, b ^= 1) {
    T* const buf = buffers + b * piece_len;
    const int64_t row = w / pieces, begin = w % pieces * piece_len, len = std::min(piece_len, p.row_len - begin);
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    const T* src = x + in_off + begin;
    const int64_t packs = len / E;
    async_wait<0>();  // this piece (the only group in flight)
    // This thread's (max, sum) over the packs it copied and its share of a partial tail.
    float m = -kInf;
    for (int64_t c = tid; c < packs; c += threads) {
      const Pack<T, E> q = load_pack<E>(buf + c * E);
#pragma unroll
      for (int e = 0; e < E; ++e) m = nan_max(m, to_float(q.v[e]));
    }
    for (int64_t j = packs * E + tid; j < len; j += threads) m = nan_max(m, to_float(src[j]));
    float s = 0.f;
    if (m != -kInf) {  // all -inf (or nothing): (-inf, 0), never exp(-inf - -inf)
      for (int64_t c = tid; c < packs; c += threads) {
        const Pack<T, E> q = load_pack<E>(buf + c * E);
#pragma unroll
        for (int e = 0; e < E; ++e) s += __expf(to_float(q.v[e]) - m);
      }
      for (int64_t j = packs * E + tid; j < len; j += threads) s += __expf(to_float(src[j]) - m);
    }
    const MaxSum mine = block_reduce<OnlineSoftmax>(MaxSum{m, s}, scratch);
    issue(w + gridDim.x, buffers + (b ^ 1) * piece_len);  // lands while this piece waits and is written
    if (tid == 0) {
      parts[w] = mine;
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(arrived[row]);
      count.fetch_add(1u, cuda::memory_order_release);
      while (count.load(cuda::memory_order_acquire) < static_cast<unsigned>(pieces)) __nanosleep(64);
    }
    __syncthreads();
    MaxSum acc = OnlineSoftmax::identity();
    for (int64_t k = tid; k < pieces; k += threads) acc = OnlineSoftmax::apply(acc, load_cg(parts + row * pieces + k));
    const MaxSum total = block_reduce<OnlineSoftmax>(acc, scratch);
    const float inv = 1.f / total.sum;
    T* const dst = y + out_off + begin;
    for (int64_t c = tid; c < packs; c += threads) {
      const Pack<T, E> q = load_pack<E>(buf + c * E);
      Pack<T, E> r;
#pragma unroll
      for (int e = 0; e < E; ++e) r.v[e] = from_float<T>(__expf(to_float(q.v[e]) - total.max) * inv);
      store_pack<E>(dst + c * E, r);
    }
    for (int64_t j = packs * E + tid; j < len; j += threads) dst[j] = from_float<T>(__expf(to_float(src[j]) - total.max) * inv);
    __syncthreads();  // buf is refilled by the prefetch issued in the next iteration
  }
  async_wait<0>();
}

// A thread per row, rows adjacent in memory: coalesced walks down the columns.
template <class T>
__global__ void softmax_columns(RowPlan p, const T* __restrict__ x, T* __restrict__ y) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < p.rows; row += step) {
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    MaxSum acc = OnlineSoftmax::identity();
    for (int64_t r = 0; r < p.row_len; ++r) OnlineSoftmax::add(acc, to_float(x[in_off + r * p.in_row_stride]));
    const float inv = 1.f / acc.sum;
    for (int64_t r = 0; r < p.row_len; ++r)
      y[out_off + r * p.out_row_stride] = from_float<T>(__expf(to_float(x[in_off + r * p.in_row_stride]) - acc.max) * inv);
  }
}

// First version, for rows that are neither contiguous nor adjacent: three strided passes.
template <class T>
__global__ void softmax_strided_rows(RowPlan p, const T* __restrict__ x, T* __restrict__ y) {
  __shared__ float scratch[32];
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    const T* xr = x + in_off;
    float m = -kInf;
    for (int64_t r = threadIdx.x; r < p.row_len; r += blockDim.x) m = nan_max(m, to_float(xr[r * p.in_row_stride]));
    m = block_reduce<NanMax>(m, scratch);
    float sum = 0.f;
    for (int64_t r = threadIdx.x; r < p.row_len; r += blockDim.x) sum += __expf(to_float(xr[r * p.in_row_stride]) - m);
    sum = block_reduce<Sum>(sum, scratch);
    const float inv = 1.f / sum;
    for (int64_t r = threadIdx.x; r < p.row_len; r += blockDim.x)
      y[out_off + r * p.out_row_stride] = from_float<T>(__expf(to_float(xr[r * p.in_row_stride]) - m) * inv);
  }
}

template <class T>
void launch(const RowPlan& p, Launch l, const T* x, T* y, MaxSum* parts, cudaStream_t s) {
  const unsigned threads = static_cast<unsigned>(l.threads);
  // Row kernels get several blocks per resident slot: on the H200 that measured faster
  // than a grid of exactly the resident blocks (4096x32768 f32: 0.29 ms against 0.60 ms).
  const int blocks_per_sm = std::max(1, 2048 / l.threads);
  switch (l.strategy) {
    case Strategy::WarpCached: {
      auto* kernel = softmax_warp_cached<T>;
      kernel<<<resident_grid(kernel, l.threads, p.rows, threads / 32), threads, 0, s>>>(p, x, y);
      break;
    }
    case Strategy::BlockCached: {
      softmax_block_cached<T, kCached, kCachedThreads><<<grid_for(p.rows, 1, blocks_per_sm * 4), threads, 0, s>>>(p, x, y);
      break;
    }
    case Strategy::BlockCachedWide: {
      softmax_block_cached<T, kCachedWide, kCachedWideThreads><<<grid_for(p.rows, 1, blocks_per_sm * 4), threads, 0, s>>>(p, x, y);
      break;
    }
    case Strategy::Staged: {
      auto* kernel = softmax_staged<T>;
      const size_t smem = static_cast<size_t>(kStages) * (p.row_len / kPack<T> * kPack<T>) * sizeof(T);
      const int64_t fit = resident_capacity(reinterpret_cast<const void*>(kernel), l.threads, smem);
      kernel<<<static_cast<unsigned>(std::min(p.rows, fit)), threads, smem, s>>>(p, x, y);
      break;
    }
    case Strategy::RowGrid: {
      auto* kernel = softmax_row_grid<T>;
      unsigned* arrived = reinterpret_cast<unsigned*>(reinterpret_cast<char*>(parts) + grid_counters_offset(p, l));
      check_cuda(cudaMemsetAsync(arrived, 0, static_cast<size_t>(p.rows) * sizeof(unsigned), s), "softmax (counters)");
      const size_t smem = 2 * kGridPieceBytes;
      allow_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
      RowPlan plan = p;
      int64_t piece_len = l.piece_len, pieces = l.splits;
      void* args[] = {&plan, &piece_len, &pieces, &x, &y, &parts, &arrived};
      // Cooperative: the launch fails rather than run a grid whose blocks are not all
      // resident (the row's pieces wait for each other). Failing (another kernel or MPS
      // holding SMs), the row is done by BlockOnline instead.
      const cudaError_t err = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(l.grid),
                                                          dim3(threads), args, smem, s);
      if (err == cudaErrorCooperativeLaunchTooLarge || err == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        softmax_block_online<T><<<grid_for(p.rows, 1, 4), 1024, 0, s>>>(p, x, y);
      } else {
        check_cuda(err, "softmax kernel (row grid)");
      }
      break;
    }
    case Strategy::BlockOnline: {
      softmax_block_online<T><<<grid_for(p.rows, 1, blocks_per_sm * 4), threads, 0, s>>>(p, x, y);
      break;
    }
    case Strategy::SplitOnline: {
      const unsigned grid = grid_for(p.rows * l.splits, 1, blocks_per_sm * 4);
      softmax_split_stats<T><<<grid, threads, 0, s>>>(p, l.splits, x, parts);
      softmax_split_write<T><<<grid, threads, 0, s>>>(p, l.splits, x, y, parts);
      break;
    }
    case Strategy::Columns:
      softmax_columns<T><<<grid_for(p.rows, threads, 16), threads, 0, s>>>(p, x, y);
      break;
    case Strategy::Strided:
      softmax_strided_rows<T><<<grid_for(p.rows, 1, 8), threads, 0, s>>>(p, x, y);
      break;
  }
  check_launch("softmax kernel");
}

}  // namespace

namespace oprt {
size_t softmax_workspace_bytes(SoftmaxDescriptor& d) {
  d.backend_variant = mode_from_env();
  if (d.plan.rows == 0 || d.plan.row_len == 0) return 0;
  return partial_bytes(d.plan, choose_strategy(d.plan, d.dtype, d.backend_variant, sm_count()));
}
}  // namespace oprt

extern "C" OPRT_API oprt_status oprt_execute_softmax(const oprt_softmax_descriptor* desc, void* workspace,
                                                     size_t workspace_size, void* out, const void* in,
                                                     oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<SoftmaxDescriptor>(desc, workspace, workspace_size);
    if (d.plan.rows == 0 || d.plan.row_len == 0) return;
    require_buffers({{out, "out", true}, {in, "in", true}});
    Launch l = choose_strategy(d.plan, d.dtype, d.backend_variant, sm_count());
    if (partial_bytes(d.plan, l) > workspace_size) l = {Strategy::BlockOnline, 1024, 1};  // another GPU than at create
    // Staged and RowGrid copy whole 16-byte chunks: rows aligned by the plan, bases here.
    const bool bases_aligned = reinterpret_cast<uintptr_t>(out) % 16 == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0;
    if (l.strategy == Strategy::Staged && !bases_aligned) l = choose_strategy(d.plan, d.dtype, kOld, sm_count());
    if (l.strategy == Strategy::RowGrid && !bases_aligned) l = {Strategy::BlockOnline, 1024, 1};
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      launch<T>(d.plan, l, static_cast<const T*>(in), static_cast<T*>(out), static_cast<MaxSum*>(workspace),
                as_cuda_stream(stream));
    });
  });
}
