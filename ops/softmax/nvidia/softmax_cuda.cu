// softmax on NVIDIA GPUs: f32 math, torch's results for rows holding inf or NaN.
//
// choose_strategy() below is the whole decision:
//   contiguous rows (the innermost dim):
//     up to 32 * 32 elements      a warp per row, the row held in registers: one read,
//                                 one write, warp shuffles only
//     up to 512 * 32 elements     a block per row, the row held in registers (32 values
//                                 per thread): one read, one write
//     up to 512 * 64 elements     the same with 64 values per thread
//     longer rows                 online softmax (running max and rescaled sum in one
//                                 pass), then a second pass that writes: two reads;
//                                 split over several blocks when rows are fewer than SMs
//   strided rows whose neighbours are adjacent (a leading dim): a thread per row, online
//     pass then write, each warp reading 32 adjacent elements per step
//   anything else: a block per row, three strided passes.
#include <algorithm>
#include <tuple>

#include "block_reduce.cuh"
#include "cuda_launch.cuh"
#include "softmax_descriptor.h"
#include "vector_io.cuh"

using namespace oprt;

namespace {

enum class Strategy { WarpCached, BlockCached, BlockCachedWide, BlockOnline, SplitOnline, Columns, Strided };

struct Launch {
  Strategy strategy;
  int threads;
  int64_t splits;
};

// Row values each thread holds in registers, and the most threads per block for each
// (65536 registers per SM). Prefetching the next row doubles the registers held: on the
// H200 the lost occupancy cost more than the overlap gained in the block kernels
// (8192x8192 f32: 0.151 ms without, 0.223 ms with), so only the warp kernel prefetches.
constexpr int kCached = 32, kCachedThreads = 512;
constexpr int kCachedWide = 64, kCachedWideThreads = 512;
constexpr int64_t kMinSplitElements = 65536;

bool contiguous_rows(const RowPlan& p) { return p.row_len == 1 || (p.in_row_stride == 1 && p.out_row_stride == 1); }

bool neighbours_adjacent(const RowPlan& p) {
  const int last = p.outer_rank - 1;
  return last >= 0 && p.in_outer_strides[last] == 1 && p.out_outer_strides[last] == 1;
}

Launch choose_strategy(const RowPlan& p, int sms) {
  if (contiguous_rows(p)) {
    if (p.row_len <= 32 * kCached) return {Strategy::WarpCached, 128, 1};
    for (const auto [values, max_threads, strategy] : {std::tuple{kCached, kCachedThreads, Strategy::BlockCached},
                                                       std::tuple{kCachedWide, kCachedWideThreads, Strategy::BlockCachedWide}}) {
      if (p.row_len <= int64_t{max_threads} * values) {
        const int64_t threads = (p.row_len + values - 1) / values;
        return {strategy, static_cast<int>(std::max<int64_t>(64, (threads + 31) / 32 * 32)), 1};
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

size_t partial_bytes(const RowPlan& p, const Launch& l) {
  return l.strategy == Strategy::SplitOnline ? static_cast<size_t>(p.rows * l.splits) * sizeof(MaxSum) : 0;
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
size_t softmax_workspace_bytes(const SoftmaxDescriptor& d) {
  if (d.plan.rows == 0 || d.plan.row_len == 0) return 0;
  return partial_bytes(d.plan, choose_strategy(d.plan, sm_count()));
}
}  // namespace oprt

extern "C" OPRT_API oprt_status oprt_execute_softmax(const oprt_softmax_descriptor* desc, void* workspace,
                                                     size_t workspace_size, void* out, const void* in,
                                                     oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<SoftmaxDescriptor>(desc, workspace, workspace_size);
    if (d.plan.rows == 0 || d.plan.row_len == 0) return;
    require_buffers({{out, "out", true}, {in, "in", true}});
    Launch l = choose_strategy(d.plan, sm_count());
    if (partial_bytes(d.plan, l) > workspace_size) l = {Strategy::BlockOnline, 1024, 1};  // another GPU than at create
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      launch<T>(d.plan, l, static_cast<const T*>(in), static_cast<T*>(out), static_cast<MaxSum*>(workspace),
                as_cuda_stream(stream));
    });
  });
}
