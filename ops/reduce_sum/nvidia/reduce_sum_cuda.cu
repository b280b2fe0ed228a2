// reduce_sum on NVIDIA GPUs: f32 accumulation, a strategy per row shape.
//
// choose_strategy() below is the whole decision, by the layout and length of the rows:
//   contiguous rows (reducing the innermost dim), 16-byte packed loads:
//     up to 1024 elements   ShortRows: a group of 1..32 lanes per row (16 values per
//                           lane held in registers, short_shape: 4 f32 packs, 2 16-bit
//                           ones), several rows per warp, 256 threads per block; a row's
//                           loads are all issued before any add.
//                           262144x128 f32 on the H200 took 71.8 us through WarpPerRow
//                           (a 64-bit division per row, one pack in flight per lane, 5
//                           shuffles per row), against 39.8 us for the step kernel
//     short rows (old)      a warp per row        no shared memory, 8 rows per block
//     16K..32K rows, fewer  a block per row       one block each, the hardware schedules
//       than 64 per SM                            them (OPRT_REDUCE_SUM_STRATEGY=old: a warp)
//     long rows, many rows  a block per row       threads stride along the row
//     long rows, few rows   a row split over blocks, partial sums in the workspace,
//                           then a warp per row adds the partials (no atomics: the
//                           result does not depend on scheduling)
//   strided rows whose neighbours are adjacent (reducing a leading dim): a thread per
//     output (per 16-byte pack of outputs where aligned) walks down its column, so each warp
//     reads 32 adjacent elements (packs) per step;
//     the columns are split in row ranges when there are too few to fill the GPU. Sums
//     of 64 terms in f32, carried and combined in f64: no less accurate than torch's
//   anything else: a block per row, strided loads.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

#include "block_reduce.cuh"
#include "cuda_launch.cuh"
#include "reduce_sum_descriptor.h"
#include "row_groups.cuh"
#include "vector_io.cuh"

using namespace oprt;

namespace {

enum class Strategy { ShortRows, WarpPerRow, BlockPerRow, SplitRow, Columns, Strided };

struct Launch {
  Strategy strategy;
  int threads;     // per block
  int64_t splits;  // blocks (or thread ranges) per row; partials in the workspace when > 1
  bool grid_per_row = false;  // BlockPerRow: a block per row (the hardware schedules them),
                              // not a resident grid striding over the rows
  ShortShape shape{};         // ShortRows: lanes per row, packs per lane
};

// OPRT_REDUCE_SUM_STRATEGY, read when a descriptor is created (its choice kept in backend_plan):
//   auto  (default) long rows too few to give every SM its warps go a block per row
//   old   the choice before that and before ShortRows, to benchmark against
// OPRT_REDUCE_SUM_CONFIG="lanes=N" (N a power of two up to 32) forces ShortRows' lanes per
// row, for the rows it then still fits (8 packs per lane at most); parsed at create.
enum Mode : int { kAuto = 0, kOld = 1 };
constexpr int64_t kShortRowMax = 1024;  // ShortRows for rows up to this many elements

// The forced lanes per row (0: chosen by the row length).
int lanes_from_env() {
  int lanes = 0;
  parse_config("OPRT_REDUCE_SUM_CONFIG", env_or("OPRT_REDUCE_SUM_CONFIG", ""), {{"lanes", &lanes, 1, 32, true}});
  return lanes;
}

int mode_from_env() {
  const char* v = env_or("OPRT_REDUCE_SUM_STRATEGY", "auto");
  if (std::strcmp(v, "auto") == 0) return kAuto;
  if (std::strcmp(v, "old") == 0) return kOld;
  fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_REDUCE_SUM_STRATEGY=", v, " is not one of auto, old");
}

constexpr int64_t kWarpRowMax = 32768;      // rows up to this many elements: a warp each (no block syncs)
constexpr int64_t kMinSplitElements = 16384;  // never split a row into smaller pieces
constexpr int64_t kColumnChunk = 64;          // column terms one f32 accumulator adds
// A column's row range is never shorter than this: its partial sum (4 bytes written, then read)
// costs at most 1/32 of the bytes it sums. Counted in terms (64 f32), 16-bit columns were cut
// twice as fine: at 8192x8192 f16 over dim 0, 264 ranges per column, 0.91x torch on the H200.
constexpr int64_t kMinColumnPieceBytes = 256;

bool neighbours_adjacent(const RowPlan& p) {
  return p.in_row_stride != 1 && p.outer_rank > 0 && p.in_outer_strides[p.outer_rank - 1] == 1;
}

// Rows longer than this, fewer than a full SM's warps (64) per SM: a warp per row left
// ~31 warps per SM at 4096x32768 f32 (2 KiB in flight each), 0.93x torch on the H200.
// A block of 256 per row, one block per row, 8 packs in flight per thread: at ~48
// registers 5 blocks fit per SM, 160 KiB in flight.
constexpr int64_t kBlockRowMin = 16384;
constexpr int kRowBatch = 8;  // its packs in flight per thread

Launch choose_strategy(const RowPlan& p, oprt_dtype dtype, int mode, int lanes, int sms) {
  if (p.in_row_stride == 1 || p.row_len == 1) {
    if (mode == kAuto && p.row_len <= kShortRowMax) {
      const int pack = dtype == OPRT_DTYPE_F32 ? 4 : 8;
      ShortShape shape = short_shape(p.row_len, pack, lanes);
      if (shape.lanes == 0) shape = short_shape(p.row_len, pack);  // forced lanes too few for the row
      Launch l{Strategy::ShortRows, 256, 1};
      l.shape = shape;
      return l;
    }
    if (mode == kAuto && p.row_len > kBlockRowMin && p.row_len <= kWarpRowMax && p.rows < int64_t{64} * sms)
      return {Strategy::BlockPerRow, 256, 1, true};
    if (p.row_len <= kWarpRowMax) return {Strategy::WarpPerRow, 256, 1};
    if (p.rows >= sms) return {Strategy::BlockPerRow, p.row_len >= 16384 ? 1024 : 512, 1};
    const int64_t splits = std::clamp<int64_t>(4 * sms / std::max<int64_t>(p.rows, 1), 1,
                                               std::max<int64_t>(1, p.row_len / kMinSplitElements));
    return {splits > 1 ? Strategy::SplitRow : Strategy::BlockPerRow, 1024, splits};
  }
  if (neighbours_adjacent(p)) {
    // Enough (columns, row range) threads for ~8 blocks of 256 per SM, a thread taking a
    // 16-byte pack of columns where the layout allows (sum_columns).
    const int bytes = dtype == OPRT_DTYPE_F32 ? 4 : 2, pack = 16 / bytes;
    const int64_t threads = p.columns_pack(pack, false) ? p.rows / pack : p.rows;
    const int64_t want = int64_t{8} * 256 * sms;
    const int64_t most = std::min<int64_t>(p.row_len * bytes / kMinColumnPieceBytes, 65535);
    const int64_t splits = std::clamp<int64_t>(want / std::max<int64_t>(threads, 1), 1, std::max<int64_t>(1, most));
    return {Strategy::Columns, 256, splits};
  }
  return {Strategy::Strided, 256, 1};
}

size_t partial_bytes(const RowPlan& p, const Launch& l) {
  return l.splits > 1 ? static_cast<size_t>(p.rows * l.splits) * sizeof(float) : 0;
}

// ShortRows: rows of up to lanes * Packs * kPack<T> elements, a group of `lanes` threads
// (a power of two <= 32) per row, blockDim.x / lanes rows per block at a time. Each thread
// loads its packs (row elements ((k * lanes + lane) * E, + E)) before adding any; rows that
// are not 16-byte aligned (odd lengths, offset views) are read element by element.
template <class T, int Packs>
__global__ void sum_row_groups(RowPlan p, int lanes, const T* __restrict__ x, T* __restrict__ y) {
  constexpr int E = kPack<T>;
  const int groups = blockDim.x / lanes, g = threadIdx.x / lanes, lane = threadIdx.x % lanes;
  // block-uniform loop (the shuffles need every lane of a warp): groups past the end idle
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groups; first < p.rows;
       first += static_cast<int64_t>(gridDim.x) * groups) {
    const int64_t row = first + g;
    float acc = 0.f;
    int64_t in_off = 0, out_off = 0;
    if (row < p.rows) {
      p.row_offsets(row, in_off, out_off);
      const T* r = x + in_off;
      const bool packed = elements_to_alignment<E>(r) == 0;
      float v[Packs][E];
#pragma unroll
      for (int k = 0; k < Packs; ++k) {
        const int64_t base = (static_cast<int64_t>(k) * lanes + lane) * E;
        if (packed && base + E <= p.row_len) {
          const Pack<T, E> q = load_pack<E>(r + base);
#pragma unroll
          for (int e = 0; e < E; ++e) v[k][e] = to_float(q.v[e]);
        } else {
#pragma unroll
          for (int e = 0; e < E; ++e) v[k][e] = base + e < p.row_len ? to_float(r[base + e]) : 0.f;
        }
      }
#pragma unroll
      for (int k = 0; k < Packs; ++k)
#pragma unroll
        for (int e = 0; e < E; ++e) acc += v[k][e];
    }
    acc = group_reduce<Sum>(acc, lanes);
    if (lane == 0 && row < p.rows) y[out_off] = from_float<T>(acc);
  }
}

template <class T, int Packs>
void launch_row_groups(const RowPlan& p, int lanes, const T* x, T* y, cudaStream_t s) {
  auto* kernel = sum_row_groups<T, Packs>;
  constexpr int threads = 256;
  kernel<<<resident_grid(kernel, threads, p.rows, threads / lanes), threads, 0, s>>>(p, lanes, x, y);
}

template <class T>
__global__ void sum_warp_per_row(RowPlan p, const T* __restrict__ x, T* __restrict__ y) {
  const int lane = threadIdx.x & 31, warps_per_block = blockDim.x >> 5;
  const int64_t step = static_cast<int64_t>(gridDim.x) * warps_per_block;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * warps_per_block + (threadIdx.x >> 5); row < p.rows;
       row += step) {
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    float acc = 0.f;
    for_each_in_row(x + in_off, p.row_len, lane, 32, [&](float v) { acc += v; });
    acc = warp_reduce<Sum>(acc);
    if (lane == 0) y[out_off] = from_float<T>(acc);
  }
}

// Block b sums piece b % splits of row b / splits (splits == 1: the whole row) and
// writes it to y, or to partials[b] when the row is split.
template <class T, int Batch = kBatch>
__global__ void __launch_bounds__(1024) sum_block_per_piece(RowPlan p, int64_t splits, const T* __restrict__ x, T* __restrict__ y,
                                    float* __restrict__ partials) {
  __shared__ float scratch[32];
  const int64_t piece_len = (p.row_len + splits - 1) / splits;
  for (int64_t b = blockIdx.x; b < p.rows * splits; b += gridDim.x) {
    const int64_t row = b / splits, piece = b % splits;
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    const int64_t begin = piece * piece_len, len = std::max<int64_t>(0, std::min(piece_len, p.row_len - begin));
    float acc = 0.f;
    for_each_in_row<Batch>(x + in_off + begin, len, threadIdx.x, blockDim.x, [&](float v) { acc += v; });
    acc = block_reduce<Sum>(acc, scratch);
    if (threadIdx.x == 0) {
      if (splits == 1) y[out_off] = from_float<T>(acc);
      else partials[b] = acc;
    }
  }
}

// A thread per (E adjacent outputs, row range): adjacent threads read adjacent elements,
// E of them as one 16-byte pack where the layout allows (a warp then reads 512 contiguous
// bytes per step: 8192x8192 f32 over dim 0 took 0.097 ms one element per thread, 0.80x torch).
template <class T, int E>
__global__ void sum_columns(RowPlan p, const T* __restrict__ x, T* __restrict__ y, float* __restrict__ partials) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * E;
  if (first >= p.rows) return;
  const int64_t splits = gridDim.y, piece = blockIdx.y;
  const int64_t piece_len = (p.row_len + splits - 1) / splits;
  const int64_t begin = piece * piece_len, end = std::min(p.row_len, begin + piece_len);
  int64_t in_off, out_off;
  p.row_offsets(first, in_off, out_off);
  const T* col = x + in_off;
  // Split accumulation: f32 over chunks of kColumnChunk terms, the chunk sums in f64. One
  // f32 accumulator down a whole column made a 100003-long column sum 7.6x less accurate
  // than torch's (its error grows with the terms it adds); an f64 add per 64 loads is free.
  double total[E] = {};
  for (int64_t chunk = begin; chunk < end; chunk += kColumnChunk) {
    const int64_t chunk_end = std::min(end, chunk + kColumnChunk);
    float acc[E] = {};
#pragma unroll 8
    for (int64_t r = chunk; r < chunk_end; ++r) {
      const Pack<T, E> v = load_pack<E>(col + r * p.in_row_stride);
#pragma unroll
      for (int e = 0; e < E; ++e) acc[e] += to_float(v.v[e]);
    }
#pragma unroll
    for (int e = 0; e < E; ++e) total[e] += acc[e];
  }
#pragma unroll
  for (int e = 0; e < E; ++e) {
    if (splits > 1) {
      partials[piece * p.rows + first + e] = static_cast<float>(total[e]);
    } else {
      if (e > 0) p.row_offsets(first + e, in_off, out_off);  // the outputs need not be adjacent
      y[out_off] = from_float<T>(static_cast<float>(total[e]));
    }
  }
}

// Adds the `splits` partial sums of each row: partials[row * row_step + k * split_step]. A block
// takes 32 rows (a lane each: adjacent partials when row_step is 1) and its kPartialSlices warps
// split each row's partials (k = warp, warp + kPartialSlices, ...), each adding its share in f64
// (up to 65535 partials: an f32 running sum would lose accuracy here), then warp 0 adds the
// slices in a fixed order: the result does not depend on scheduling. A thread per row walking
// all of its partials took 10.9 us at 8192x8192 over dim 0 (128 partials each, 32 blocks).
constexpr int kPartialSlices = 8;

template <class T>
__global__ void __launch_bounds__(32 * kPartialSlices) sum_partials(RowPlan p, int64_t splits, int64_t row_step,
                                                                    int64_t split_step, const float* __restrict__ partials,
                                                                    T* __restrict__ y) {
  __shared__ double slice_sums[kPartialSlices][32];
  const int lane = threadIdx.x % 32, slice = threadIdx.x / 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * 32 + lane;
  double acc = 0.0;
  if (row < p.rows) {
#pragma unroll 4
    for (int64_t k = slice; k < splits; k += kPartialSlices) acc += partials[row * row_step + k * split_step];
  }
  slice_sums[slice][lane] = acc;
  __syncthreads();
  if (slice == 0 && row < p.rows) {
    for (int j = 1; j < kPartialSlices; ++j) acc += slice_sums[j][lane];
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    y[out_off] = from_float<T>(static_cast<float>(acc));
  }
}

template <class T>
void launch_sum_partials(const RowPlan& p, int64_t splits, int64_t row_step, int64_t split_step, const float* partials,
                         T* y, cudaStream_t s) {
  const unsigned grid = static_cast<unsigned>((p.rows + 31) / 32);
  sum_partials<T><<<grid, 32 * kPartialSlices, 0, s>>>(p, splits, row_step, split_step, partials, y);
}

// First version, for rows that are neither contiguous nor column-adjacent.
template <class T>
__global__ void sum_strided_rows(RowPlan p, const T* __restrict__ x, T* __restrict__ y) {
  __shared__ float scratch[32];
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    float acc = 0.f;
    for (int64_t r = threadIdx.x; r < p.row_len; r += blockDim.x) acc += to_float(x[in_off + r * p.in_row_stride]);
    acc = block_reduce<Sum>(acc, scratch);
    if (threadIdx.x == 0) y[out_off] = from_float<T>(acc);
  }
}

template <class T>
void launch(const RowPlan& p, Launch l, const T* x, T* y, float* partials, cudaStream_t s) {
  const unsigned threads = static_cast<unsigned>(l.threads);
  switch (l.strategy) {
    case Strategy::ShortRows: {
      switch (l.shape.packs) {
        case 1: launch_row_groups<T, 1>(p, l.shape.lanes, x, y, s); break;
        case 2: launch_row_groups<T, 2>(p, l.shape.lanes, x, y, s); break;
        case 4: launch_row_groups<T, 4>(p, l.shape.lanes, x, y, s); break;
        default: launch_row_groups<T, 8>(p, l.shape.lanes, x, y, s); break;
      }
      break;
    }
    case Strategy::WarpPerRow: {
      auto* kernel = sum_warp_per_row<T>;
      kernel<<<resident_grid(kernel, l.threads, p.rows, threads / 32), threads, 0, s>>>(p, x, y);
      break;
    }
    case Strategy::BlockPerRow:
    case Strategy::SplitRow: {
      if (l.grid_per_row) {
        sum_block_per_piece<T, kRowBatch><<<static_cast<unsigned>(std::min<int64_t>(p.rows, INT32_MAX)), threads, 0, s>>>(
            p, 1, x, y, partials);
        break;
      }
      auto* kernel = sum_block_per_piece<T>;
      kernel<<<resident_grid(kernel, l.threads, p.rows * l.splits, 1), threads, 0, s>>>(p, l.splits, x, y, partials);
      if (l.splits > 1) launch_sum_partials<T>(p, l.splits, l.splits, 1, partials, y, s);
      break;
    }
    case Strategy::Columns: {
      constexpr int E = kPack<T>;
      const bool packed = p.columns_pack(E, false) && reinterpret_cast<uintptr_t>(x) % 16 == 0;
      const int64_t per_block = int64_t{threads} * (packed ? E : 1);
      const dim3 grid(static_cast<unsigned>((p.rows + per_block - 1) / per_block), static_cast<unsigned>(l.splits));
      if (packed) sum_columns<T, E><<<grid, threads, 0, s>>>(p, x, y, partials);
      else sum_columns<T, 1><<<grid, threads, 0, s>>>(p, x, y, partials);
      if (l.splits > 1) launch_sum_partials<T>(p, l.splits, 1, p.rows, partials, y, s);
      break;
    }
    case Strategy::Strided:
      sum_strided_rows<T><<<grid_for(p.rows, 1, 32), threads, 0, s>>>(p, x, y);
      break;
  }
  check_launch("reduce_sum kernel");
}

}  // namespace

namespace oprt {
// The decision, made once and kept in the descriptor; execute only launches.
size_t reduce_sum_workspace_bytes(ReduceSumDescriptor& d) {
  const int mode = mode_from_env(), lanes = lanes_from_env();  // a bad override fails create even when empty
  if (d.plan.rows == 0) return 0;
  auto launch = std::make_shared<Launch>(d.plan.row_len == 0 ? Launch{Strategy::WarpPerRow, 256, 1}  // empty rows: zeros
                                                             : choose_strategy(d.plan, d.dtype, mode, lanes, sm_count()));
  d.backend_plan = launch;
  return partial_bytes(d.plan, *launch);
}
}  // namespace oprt

extern "C" OPRT_API oprt_status oprt_execute_reduce_sum(const oprt_reduce_sum_descriptor* desc, void* workspace,
                                                        size_t workspace_size, void* out, const void* in,
                                                        oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<ReduceSumDescriptor>(desc, workspace, workspace_size);
    if (d.plan.rows == 0) return;
    require_buffers({{out, "out", true}, {in, "in", d.plan.row_len > 0}});
    const Launch& l = *static_cast<const Launch*>(d.backend_plan.get());
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      launch<T>(d.plan, l, static_cast<const T*>(in), static_cast<T*>(out), static_cast<float*>(workspace),
                as_cuda_stream(stream));
    });
  });
}
