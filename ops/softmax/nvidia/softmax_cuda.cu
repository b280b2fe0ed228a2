// softmax on NVIDIA GPUs: f32 math, torch's results for rows holding inf or NaN.
//
// Which kernel runs is decided once, when the descriptor is created (choose_launch), and
// kept in it: contiguous rows take the first row of kTable that admits them (by row
// length, dtype and 16-byte alignment; the H200 measurement behind each row beside it),
// strided rows take Columns (a leading dim: softmax_columns.cuh) or three strided passes.
// The kernels, from short rows to long:
//   ShortRows        a group of 1..32 lanes per row, the row in registers, several rows per
//                    warp, group shuffles only (softmax_row_groups with short_shape's lanes)
//   Bulk             whole 16-bit rows moved by the copy engine into shared memory and back
//                    (softmax_bulk.cuh, sm_90)
//   RowGroups        512 threads x 16 values per 16-bit row, the next rows staged (cp.async)
//   Staged           a block per row, 32 values per thread in registers, the block's next two
//                    rows landing in shared memory meanwhile
//   BlockCached(Wide) a block per row, 32 (64) values per thread in registers: one read, one write
//   Cluster          a thread-block cluster per long row, its pieces held in shared memory, the
//                    blocks' (max, sum) exchanged through distributed shared memory: one read
//   Online           running max and rescaled sum in one pass, a second pass writes: two reads;
//                    split over several blocks when rows are fewer than SMs
// OPRT_SOFTMAX_STRATEGY and OPRT_SOFTMAX_CONFIG (Overrides) let scripts/softmax_sweep.py time
// other launch shapes of these kernels; no override reaches a kernel the table does not name.
// Kernels no row selects were deleted (git keeps them: a warp per row, RowGrid's co-resident
// grid, RowGroups reading its staged values from shared memory).

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <cooperative_groups.h>
#include <cuda/atomic>

#include "async_copy.cuh"
#include "block_reduce.cuh"
#include "cuda_launch.cuh"
#include "row_groups.cuh"
#include "softmax_bulk.cuh"
#include "softmax_columns.cuh"
#include "softmax_descriptor.h"
#include "vector_io.cuh"

using namespace oprt;

namespace {

enum class Strategy { ShortRows, Bulk, RowGroups, Staged, BlockCached, BlockCachedWide, Cluster, Online, Columns, Strided };

// What one descriptor runs, decided once at create (choose_launch) and kept for execute.
struct Launch {
  Strategy strategy;
  int threads;
  int64_t splits = 1;     // Online: blocks per row (1: a block per row)
  ShortShape shape{};     // ShortRows, RowGroups: threads per row (lanes), packs per thread
  int stages = 0;         // RowGroups, ShortRows, Bulk: rows landing in shared memory per group (0: none;
                          // 1, ShortRows only: the next row's loads held in registers)
  int waves = 1;          // ShortRows: the grid in resident grids
  int cluster = 0;        // Cluster: blocks per cluster (= per row)
  int64_t held_packs = 0; // Cluster: 16-byte packs of its piece each block holds in shared memory
};

// The two launches a descriptor keeps: the table's choice for tensors whose base pointers
// are 16-byte aligned (what torch allocates), and for those that are not (an offset view),
// where the kernels that copy whole 16-byte chunks (cp.async, the copy engine) cannot run.
struct SoftmaxLaunches {
  Launch aligned, unaligned;
};

constexpr int kShortThreads = 256;

// Row values each thread holds in registers, and the most threads per block for each
// (65536 registers per SM). Prefetching the next row doubles the registers held: on the
// H200 the lost occupancy cost more than the overlap gained in the block kernels
// (8192x8192 f32: 0.151 ms without, 0.223 ms with), so they do not prefetch.
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

// Cluster: rows too long for registers, read once, on sm_90 and later. A cluster of
// `cluster` blocks per row (thread-block clusters): block r takes the r-th of `cluster`
// equal runs of the row's 16-byte packs and holds up to kClusterSmemBytes of them in
// shared memory (one block per SM at the default), the rest of its run streamed (read
// again when written, likely from L2). The blocks' (max, sum) meet through distributed
// shared memory after one cluster barrier: no counters in global memory and no
// co-resident grid, so the hardware schedules the clusters as SMs free up.
constexpr int kClusterThreads = 512;
constexpr int64_t kClusterSmemBytes = 224 * 1024;  // + ~0.3 KiB static: one block per SM (228 KiB)
// The held packs land in this many cp.async groups: each chunk's (max, sum) is computed
// while the later ones are in flight, instead of all of it after the last byte arrived.
constexpr int kClusterChunks = 4;
static_assert(kClusterChunks == 4, "softmax_cluster waits for each chunk by name (async_wait<3> .. <0>)");

// The sweep's overrides (scripts/softmax_sweep.py), read once at create. Each edits this
// descriptor's copy of the table below or the launch shape of a kernel the table names;
// none reaches a kernel that no row of the table selects.
//   OPRT_SOFTMAX_STRATEGY  auto (default); cluster: Cluster for every contiguous row past
//                          BlockCachedWide's (where it cannot launch on an sm_90 GPU, create
//                          fails naming it: a forced kernel that silently fell back would time
//                          the wrong one); bulk, bulk-512, ... (kBulkShapes' names): Bulk in
//                          that shape for every aligned contiguous row of 1025 elements to
//                          64 KiB, any dtype
//   OPRT_SOFTMAX_CONFIG    "key=value,...", every key optional:
//     threads, vals, rows, stages  RowGroups' threads per row (a power of two up to 32, or a
//                          multiple of 32), values each holds (8..64), rows per block, rows
//                          staged in shared memory (0, 2 or 3). Any of them given: RowGroups
//                          takes the 16-bit rows of 1025 to threads * vals elements
//     lanes, prefetch, waves  ShortRows' lanes per row; its next row while it reduces this one
//                          (0 none, 1 into registers, 2 or 3 stages in shared memory); its grid
//                          in resident grids (1: persistent)
//     cluster, cluster_kib  Cluster's blocks per cluster (2..16) and shared memory per block
//                          (KiB); either given: as OPRT_SOFTMAX_STRATEGY=cluster
// An invalid value fails create, naming the variable and the key.
struct Overrides {
  const BulkShape* bulk = nullptr;
  bool cluster = false;
  // RowGroups' shape from the H200 sweep (data/results/2026-12-03-h200-goals-rows-sweep.json):
  // 8192x8192 f16 took 0.1090 ms with 512 threads x 16 values per row, one row per block,
  // two stages (59% of the copy ceiling, 2.38x torch) against 0.1571 ms through Staged (41%)
  int threads = 512, vals = 16, rows = 1, stages = 2;
  bool row_groups_given = false;
  int lanes = 0, prefetch = -1, waves = 0;  // 0, -1: ShortRows' defaults by dtype (shape_launch)
  int cluster_blocks = 0, cluster_kib = -1;  // 0, -1: Cluster's defaults
};

Overrides overrides_from_env() {
  Overrides o;
  const char* strategy = env_or("OPRT_SOFTMAX_STRATEGY", "auto");
  if (std::strcmp(strategy, "cluster") == 0) o.cluster = true;
  else if (!(o.bulk = bulk_shape(strategy)) && std::strcmp(strategy, "auto") != 0)
    fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_SOFTMAX_STRATEGY=", strategy,
         " is not one of auto, cluster, bulk, bulk-512, bulk-128, bulk-256-2, bulk-256-6, bulk-1024");
  const char* text = env_or("OPRT_SOFTMAX_CONFIG", "");
  int threads = 0, vals = 0, rows = 0, stages = -1;
  parse_config("OPRT_SOFTMAX_CONFIG", text,
               {{"threads", &threads, 1, 1024, false, true}, {"vals", &vals, 8, 64, true}, {"rows", &rows, 1, 1024},
                {"stages", &stages, 0, 3}, {"lanes", &o.lanes, 1, 32, true}, {"prefetch", &o.prefetch, 0, 3},
                {"waves", &o.waves, 1, 64}, {"cluster", &o.cluster_blocks, 2, 16, true},
                {"cluster_kib", &o.cluster_kib, 0, 227}});
  if (stages == 1) fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_SOFTMAX_CONFIG=", text, ": stages=1 is not 0, 2 or 3");
  o.row_groups_given = threads || vals || rows || stages >= 0;
  if (threads) o.threads = threads;
  if (vals) o.vals = vals;
  if (rows) o.rows = rows;
  if (stages >= 0) o.stages = stages;
  if (o.threads * o.rows > 1024 || o.threads * o.rows % 32 != 0)  // whole warps: the shuffles name all 32 lanes
    fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_SOFTMAX_CONFIG=", text, ": threads * rows = ", o.threads * o.rows,
         " threads per block is not a multiple of 32 up to 1024");
  o.cluster |= o.cluster_blocks != 0 || o.cluster_kib >= 0;
  return o;
}

// Which kernel takes contiguous rows (the innermost dim): the first row of the table that
// admits them. `bytes`: 0 any dtype, 2 the 16-bit ones; lengths in elements, inclusive;
// `aligned`: every row and both base pointers start on 16 bytes. Beside each row, what
// the H200 measured that put it there.
struct Choice {
  Strategy strategy;
  int bytes;
  int64_t min_len, max_len;
  bool aligned;
};
constexpr int64_t kNoLimit = INT64_MAX;
constexpr Choice kTable[] = {
    // a group of 1..32 lanes per row, the row in registers, several rows per warp: 131072x256 f32 0.0685 ms
    // (1.01x torch) where a warp per row took 0.1686 ms; bf16 with two rows staged: 0.0414 ms, 1.38x
    // (data/results-log.md, 2026-12-03)
    {Strategy::ShortRows, 0, 1, 1024, false},
    // whole rows moved by the copy engine (sm_90): 8192x8192 f16 71% of the copy ceiling (RowGroups 60%),
    // bf16 65% (59%), 16384x4096 f16 70% (Staged 47%); f32 rows gained nothing (89% against 88%)
    // (data/results/2026-12-03-h200-goals-bulk-sweep.json)
    {Strategy::Bulk, 2, 4096, 8192, true},
    // 512 threads x 16 values per row, two rows staged: 8192x8192 f16 59% of the copy ceiling, Staged 41%
    // (data/results/2026-12-03-h200-goals-rows-sweep.json)
    {Strategy::RowGroups, 2, 4097, 8192, false},
    // a block per row, 32 values per thread, the next two rows staged: 8192x8192 f16 41%, BlockCached 39%
    {Strategy::Staged, 2, 1025, 16384, true},
    // a block per row, 32 values per thread in registers: 8192x8192 f32 86% of the copy ceiling
    {Strategy::BlockCached, 0, 1025, 16384, false},
    // the same with 64 values per thread: 4096x32768 f32 0.29 ms
    {Strategy::BlockCachedWide, 0, 16385, 32768, false},
    // a cluster of 8 blocks of 112 KiB per row, read once: 256x1048576 f32 0.834 ms against 0.888 ms online,
    // bf16 0.506 against 0.897, 64x4194304 f32 0.926 against 0.980; 16 blocks of 224 KiB: 1.07 ms
    // (data/results/2026-12-03-h200-goals-long-sweep.json). Rows of 32769 to 2^20 were not timed so.
    {Strategy::Cluster, 0, int64_t{1} << 20, kNoLimit, false},
    // online softmax (running max and rescaled sum in one pass), a second pass writes: two reads,
    // split over several blocks when rows are fewer than SMs
    {Strategy::Online, 0, 32769, kNoLimit, false},
};
constexpr int kClusterAutoBlocks = 8, kClusterAutoKib = 112;  // the Cluster row's shape (above)

using Table = std::array<Choice, std::size(kTable)>;

Choice& row_of(Table& t, Strategy s) {
  return *std::find_if(t.begin(), t.end(), [s](const Choice& c) { return c.strategy == s; });
}

// This descriptor's table: kTable as the overrides edit it.
Table table_for(const Overrides& o) {
  Table t;
  std::copy(std::begin(kTable), std::end(kTable), t.begin());
  if (o.row_groups_given) {  // the sweep's shape takes every 16-bit row it holds, before Bulk
    row_of(t, Strategy::Bulk).bytes = -1;
    row_of(t, Strategy::RowGroups) = {Strategy::RowGroups, 2, 1025, int64_t{o.threads} * o.vals, false};
  }
  if (o.bulk) row_of(t, Strategy::Bulk) = {Strategy::Bulk, 0, 1025, kNoLimit, true};
  if (o.cluster) row_of(t, Strategy::Cluster).min_len = 1025;
  return t;
}

bool contiguous_rows(const RowPlan& p) { return p.row_len == 1 || (p.in_row_stride == 1 && p.out_row_stride == 1); }

bool neighbours_adjacent(const RowPlan& p) {
  const int last = p.outer_rank - 1;
  return last >= 0 && p.in_outer_strides[last] == 1 && p.out_outer_strides[last] == 1;
}

// Every row of in and out starts at a multiple of `pack` elements from the tensor's start
// (cp.async copies whole 16-byte chunks).
bool rows_pack_aligned(const RowPlan& p, int pack) {
  for (int d = 0; d < p.outer_rank; ++d)
    if (p.outer_shape[d] > 1 && (p.in_outer_strides[d] % pack != 0 || p.out_outer_strides[d] % pack != 0)) return false;
  return true;
}

int dtype_bytes(oprt_dtype dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 2; }

template <class T>
__global__ void softmax_cluster(RowPlan p, int64_t held_packs, const T* __restrict__ x, T* __restrict__ y);

// Whether the current device has thread-block clusters (compute capability 9.0 or later);
// asked once per device.
bool device_has_clusters() { return compute_capability_major() >= 9; }

// softmax_cluster's launch: a cluster of `blocks` blocks along x; `attr` holds the
// cluster dimension the config points at.
cudaLaunchConfig_t cluster_launch_config(unsigned grid, int blocks, size_t smem, cudaStream_t s, cudaLaunchAttribute& attr) {
  attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = static_cast<unsigned>(blocks);
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(kClusterThreads);
  config.dynamicSmemBytes = smem;
  config.stream = s;
  config.attrs = &attr;
  config.numAttrs = 1;
  return config;
}

// Clusters of `blocks` blocks of `kernel` (a softmax_cluster), `smem` bytes of dynamic
// shared memory each, that can be resident at once (cudaOccupancyMaxActiveClusters); 0
// where none can: no clusters on this GPU, the kernel built without sm_90 code (its body
// is compiled for sm_90 only: ptxVersion below 90 is the empty body), more shared memory
// than a block may have, or a cluster size the GPU refuses (above 8 is non-portable and
// must be allowed per kernel first). Sets those kernel attributes on the way; cached per
// (kernel, device, blocks, smem), so they are set once per device before any launch.
int cluster_capacity(const void* kernel, int blocks, size_t smem) {
  if (!device_has_clusters()) return 0;
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, int, size_t>, int> cache;
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  const auto key = std::make_tuple(kernel, device, blocks, smem);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  int clusters = 0;
  cudaFuncAttributes attr{};
  check_cuda(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes");
  if (attr.ptxVersion >= 90 && can_launch(kernel, kClusterThreads, smem)) {
    allow_dynamic_smem(kernel, smem);
    cudaError_t err = cudaSuccess;
    if (blocks > 8) err = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchAttribute cluster_dim;
    const cudaLaunchConfig_t config = cluster_launch_config(static_cast<unsigned>(blocks), blocks, smem, nullptr, cluster_dim);
    if (err == cudaSuccess) err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // not an error of ours: the row takes another kernel
      clusters = 0;
    }
  }
  cache.emplace(key, clusters);
  return clusters;
}

// Cluster's shape for these rows: blocks per cluster (the configured size, else 16 where a
// cluster of 16 fits, else 8) and the packs each block holds in shared memory (its run, up
// to the budget); {0, 0} where no cluster can run here.
struct ClusterShape {
  int blocks = 0;
  int64_t held_packs = 0;
};

ClusterShape cluster_shape(const RowPlan& p, oprt_dtype dtype, const Overrides& o) {
  const int pack = 16 / dtype_bytes(dtype);
  const int64_t budget_packs = (o.cluster_kib >= 0 ? int64_t{o.cluster_kib} * 1024 : kClusterSmemBytes) / 16;
  for (const int blocks : {o.cluster_blocks ? o.cluster_blocks : 16, o.cluster_blocks ? 0 : 8}) {
    if (blocks == 0 || p.rows > INT32_MAX / blocks) continue;  // grid.x: a cluster per row
    // each block's run is at most this long, whatever the row's alignment (softmax_cluster)
    const int64_t run_packs = (p.row_len / pack + blocks - 1) / blocks;
    const int64_t held = std::min(run_packs, budget_packs);
    int fit = 0;
    dispatch_dtype(dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      fit = cluster_capacity(reinterpret_cast<const void*>(softmax_cluster<T>), blocks, static_cast<size_t>(held) * 16);
    });
    if (fit > 0) return {blocks, held};
  }
  return {};
}

// The launch of table row `c` for these rows, or none where its kernel cannot take them on
// this device (no copy engine, a row it cannot hold, no cluster that fits).
std::optional<Launch> shape_launch(const Choice& c, const RowPlan& p, oprt_dtype dtype, bool aligned,
                                   const Overrides& o, int sms) {
  const int bytes = dtype_bytes(dtype), pack = 16 / bytes;
  auto block_per_row = [&](Strategy s, int values) {  // whole warps holding `values` each, at least two
    const int64_t threads = (p.row_len + values - 1) / values;
    return Launch{s, static_cast<int>(std::max<int64_t>(64, (threads + 31) / 32 * 32))};
  };
  switch (c.strategy) {
    case Strategy::ShortRows: {
      Launch l{Strategy::ShortRows, kShortThreads};
      l.shape = short_shape(p.row_len, pack, o.lanes);
      if (l.shape.lanes == 0) l.shape = short_shape(p.row_len, pack);  // forced lanes too few for the row
      // Not overridden: the sweep's best at 131072x256 (kTable): float32 in over-subscribed grids
      // (waves=64: 0.0685 ms against 0.0760 ms persistent), 16-bit rows staged two ahead in shared
      // memory (prefetch=2: bf16 0.0414 ms against 0.0468 ms). Other row lengths were not timed so.
      const int prefetch = o.prefetch >= 0 ? o.prefetch : bytes == 4 ? 0 : 2;
      l.waves = o.waves ? o.waves : bytes == 4 ? 64 : 1;
      // register prefetch holds two rows: not with 8 packs per lane (128 values)
      l.stages = prefetch == 1 ? (l.shape.packs < 8 ? 1 : 0) : aligned ? prefetch : 0;
      return l;
    }
    case Strategy::Bulk: {
      if (!has_bulk_copy() || p.row_len % pack != 0 || p.row_len * bytes > kBulkMaxRowBytes) return {};
      const BulkShape b = o.bulk ? *o.bulk : BulkShape{"auto", p.row_len <= 4096 ? 128 : 256, 4};
      Launch l{Strategy::Bulk, b.threads};
      l.stages = b.stages;
      return l;
    }
    case Strategy::RowGroups: {
      Launch l{Strategy::RowGroups, o.threads * o.rows};
      l.shape = {o.threads, o.vals / pack};
      l.stages = aligned ? o.stages : 0;  // cp.async copies whole aligned packs
      return l;
    }
    case Strategy::Staged:
      if (p.row_len * bytes > kStagedMaxRowBytes) return {};
      return block_per_row(Strategy::Staged, kCached);
    case Strategy::BlockCached:
      return block_per_row(Strategy::BlockCached, kCached);
    case Strategy::BlockCachedWide:
      return block_per_row(Strategy::BlockCachedWide, kCachedWide);
    case Strategy::Cluster: {
      Overrides shape = o;
      if (!o.cluster) shape.cluster_blocks = kClusterAutoBlocks, shape.cluster_kib = kClusterAutoKib;
      const ClusterShape cs = cluster_shape(p, dtype, shape);
      if (cs.blocks == 0) {
        if (o.cluster && device_has_clusters())  // forced: never time another kernel under its name
          fail(OPRT_STATUS_DEVICE_ERROR, "softmax: OPRT_SOFTMAX_STRATEGY=cluster (or OPRT_SOFTMAX_CONFIG's cluster keys): no "
               "cluster of ", o.cluster_blocks ? std::to_string(o.cluster_blocks) : std::string("16 or 8"),
               " blocks holding up to ", o.cluster_kib >= 0 ? int64_t{o.cluster_kib} * 1024 : kClusterSmemBytes,
               " bytes of shared memory each can run on this GPU, or the library was built without sm_90 code");
        return {};
      }
      Launch l{Strategy::Cluster, kClusterThreads};
      l.cluster = cs.blocks;
      l.held_packs = cs.held_packs;
      return l;
    }
    case Strategy::Online: {
      Launch l{Strategy::Online, 1024};
      if (p.rows < sms)  // too few rows to fill the GPU: split each over blocks, 64Ki elements at least
        l.splits = std::clamp<int64_t>(2 * sms / std::max<int64_t>(p.rows, 1), 1,
                                       std::max<int64_t>(1, p.row_len / kMinSplitElements));
      return l;
    }
    default:
      return {};
  }
}

// The whole decision, made at create. Rows that are not contiguous take Columns (strided
// rows whose neighbours are adjacent, a leading dim: softmax_columns.cuh) or three strided
// passes; contiguous rows the first row of the table that admits them.
Launch choose_launch(const RowPlan& p, oprt_dtype dtype, bool bases_aligned, const Overrides& o, int sms) {
  if (!contiguous_rows(p)) return neighbours_adjacent(p) ? Launch{Strategy::Columns, 1024} : Launch{Strategy::Strided, 256};
  const int bytes = dtype_bytes(dtype);
  const bool aligned = bases_aligned && (p.rows == 1 || rows_pack_aligned(p, 16 / bytes));
  for (const Choice& c : table_for(o)) {
    if ((c.bytes != 0 && c.bytes != bytes) || p.row_len < c.min_len || p.row_len > c.max_len || (c.aligned && !aligned))
      continue;
    if (const std::optional<Launch> l = shape_launch(c, p, dtype, aligned, o, sms)) return *l;
  }
  fail(OPRT_STATUS_INTERNAL, "softmax: no row of the strategy table takes rows of ", p.row_len, " elements");
}

// Online with splits keeps each piece's (max, sum) between its two kernels.
size_t partial_bytes(const RowPlan& p, const Launch& l) {
  return l.strategy == Strategy::Online && l.splits > 1 ? static_cast<size_t>(p.rows * l.splits) * sizeof(MaxSum) : 0;
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

// RowGroups and ShortRows: rows handled by groups of `lanes` threads (a power of two up to
// 32, or a multiple of 32), blockDim.x / lanes rows per block at once, each thread holding
// Packs packs of its row in registers (CachedRow, lanes = the group). Groups up to a warp
// combine by shuffles; wider groups through shared memory with one __syncthreads per
// reduction (max and sum alternate between two scratch arrays, so no second barrier is
// needed before the next write). Stages > 0: each group's next Stages - 1 rows land in
// shared memory (cp.async) while it computes this one; each thread copies exactly the
// packs it will read, and has consumed its previous values before it refills a stage.
// Stages == 1 (ShortRows' prefetch=1): no shared memory; the group's next row's loads are
// issued into a second CachedRow before this row's reductions (as the deleted warp-per-row kernel did),
// so a warp keeps a row in flight while it shuffles and computes exp.
// Register bound: up to 16 values held per thread (both rows counted), blocks of up to
// 1024 threads (64 registers); more values, up to 512 (128 registers), so the 64-value
// rows do not spill.
template <class T, int Packs, int Stages>
__global__ void __launch_bounds__(Packs * kPack<T> * (Stages == 1 ? 2 : 1) <= 16 ? 1024 : 512) softmax_row_groups(RowPlan p, int lanes, const T* __restrict__ x, T* __restrict__ y) {
  constexpr int E = kPack<T>;
  extern __shared__ __align__(16) unsigned char groups_smem[];
  __shared__ float scratch[2][32];
  const int groups = blockDim.x / lanes, g = threadIdx.x / lanes, lane = threadIdx.x % lanes;
  const int warps = lanes >> 5;  // per group, when lanes >= 32
  auto reduce = [&](auto op, float v, float* buf) {
    using Op = decltype(op);
    if (lanes <= 32) return group_reduce<Op>(v, lanes);
    v = warp_reduce<Op>(v);
    if ((threadIdx.x & 31) == 0) buf[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = Op::identity();
    for (int w = 0; w < warps; ++w) r = Op::apply(r, buf[g * warps + w]);
    return r;
  };
  const int64_t step = static_cast<int64_t>(gridDim.x) * groups;
  const int64_t stage_len = p.row_len / E * E;  // the whole packs of a row
  T* const stages = reinterpret_cast<T*>(groups_smem) + static_cast<int64_t>(g) * Stages * stage_len;
  auto issue = [&](int64_t row, int stage) {  // copies row's packs of this thread; one commit group
    if constexpr (Stages >= 2) {
      if (row < p.rows) {
        int64_t in_off, out_off;
        p.row_offsets(row, in_off, out_off);
#pragma unroll
        for (int k = 0; k < Packs; ++k) {
          const int64_t base = (static_cast<int64_t>(k) * lanes + lane) * E;
          if (base + E <= p.row_len) copy16_async(stages + stage * stage_len + base, x + in_off + base);
        }
      }
      async_commit();
    }
  };
  const int64_t first = static_cast<int64_t>(blockIdx.x) * groups + g;
#pragma unroll
  for (int s = 0; s < (Stages >= 2 ? Stages - 1 : 0); ++s) issue(first + s * step, s);
  int stage = 0;
  // Stages == 1: the row's loads (in registers), whether it is packed
  auto load_row = [&](int64_t row, CachedRow<T, Packs>& r) {
    const bool valid = row < p.rows;
    int64_t in_off = 0, out_off = 0;
    if (valid) p.row_offsets(row, in_off, out_off);
    const bool packed = valid && both_aligned(x + in_off, y + out_off);
    r.load(x + in_off, valid ? p.row_len : 0, packed, lane, lanes);  // length 0: no loads, all -inf
    return packed;
  };
  CachedRow<T, Packs> ahead;
  bool ahead_packed = false;
  if constexpr (Stages == 1) ahead_packed = load_row(first, ahead);
  // block-uniform loop (shuffles and barriers need every thread): groups past the end idle
  for (int64_t row0 = static_cast<int64_t>(blockIdx.x) * groups; row0 < p.rows; row0 += step) {
    const int64_t row = row0 + g;
    const bool valid = row < p.rows;
    int64_t in_off = 0, out_off = 0;
    if (valid) p.row_offsets(row, in_off, out_off);
    CachedRow<T, Packs> r;
    bool packed;
    if constexpr (Stages == 1) {
      r = ahead;
      packed = ahead_packed;
      ahead_packed = load_row(row + step, ahead);  // in flight during this row's reductions
    } else if constexpr (Stages >= 2) {
      issue(row + (Stages - 1) * step, (stage + Stages - 1) % Stages);
      async_wait<Stages - 1>();  // every group but the newest Stages - 1: this row's
      r.load_staged(stages + stage * stage_len, x + in_off, valid ? p.row_len : 0, lane, lanes);
      packed = true;  // rows and bases checked 16-byte aligned on the host
      stage = (stage + 1) % Stages;
    } else {
      packed = valid && both_aligned(x + in_off, y + out_off);
      r.load(x + in_off, valid ? p.row_len : 0, packed, lane, lanes);  // length 0: no loads, all -inf
    }
    const float m = reduce(NanMax{}, r.max(), scratch[0]);
    const float s = reduce(Sum{}, r.exp_sum(m), scratch[1]);
    if (valid) r.store_scaled(y + out_off, p.row_len, packed, lane, lanes, 1.f / s);
  }
  if constexpr (Stages >= 2) async_wait<0>();
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

// Cluster: the blocks of cluster c (blockIdx.x / cluster) take row c. The row's 16-byte
// packs (after a head of up to 7 elements before the first aligned one) are cut into
// `cluster` equal runs, one per block by its rank; block 0 also takes the head, the last
// block the tail of up to 7 elements after the last whole pack (runs and scalars may be
// empty). Each block:
//   1. copies the first held_packs packs of its run into shared memory (cp.async in
//      kClusterChunks groups, thread t copying packs t, t + threads, ...: each reads only
//      what it copied, so waiting for its own copies is enough) and meanwhile streams the
//      rest of its run and its scalars through the online (max, sum) (for_each_in_row);
//   2. the (max, sum) of each chunk of held packs as it lands, max first, then the sum of
//      exp(v - max), combined with the streamed part's (OnlineSoftmax::apply, so inf and NaN
//      give torch's results as in the other kernels), reduced over the block into `part`;
//   3. cluster barrier (arrive has release, wait acquire semantics: every block's `part`
//      is visible to all), then lane r of every warp reads block r's part through
//      distributed shared memory (map_shared_rank) and the warp combines them: the same
//      values in the same lanes, so every block gets the same total bit for bit;
//   4. arrives on a second cluster barrier (its reads of the peers are done), writes its
//      held packs from shared memory (16-byte stores where out has the same alignment as
//      in, else element by element) and its streamed packs and scalars read again
//      (map_row), then waits on that barrier: no block exits while a peer may still read
//      its `part`.
// Built for sm_90 and later only; the host never launches it elsewhere (cluster_capacity).
// Bound to two blocks per SM (64 registers; f32 took 88 unbounded): cluster_kib=112 puts two
// blocks on an SM, one loading while the other writes.
template <class T>
__global__ void __launch_bounds__(kClusterThreads, 2) softmax_cluster(RowPlan p, int64_t held_packs,
                                                                  const T* __restrict__ x, T* __restrict__ y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  constexpr int E = kPack<T>;
  extern __shared__ __align__(16) unsigned char cluster_smem[];
  __shared__ MaxSum scratch[32];
  __shared__ MaxSum part;  // this block's (max, sum), read by the cluster's blocks
  const cg::cluster_group cluster = cg::this_cluster();
  const int blocks = static_cast<int>(cluster.num_blocks()), rank = static_cast<int>(cluster.block_rank());
  const int tid = threadIdx.x, threads = blockDim.x;
  int64_t in_off, out_off;
  p.row_offsets(blockIdx.x / blocks, in_off, out_off);
  const T* const src = x + in_off;
  T* const dst = y + out_off;
  const int64_t len = p.row_len;
  const int64_t head = std::min<int64_t>(elements_to_alignment<E>(src), len);
  const int64_t packs = (len - head) / E, tail = head + packs * E;  // tail: the first element after them
  const int64_t per_block = (packs + blocks - 1) / blocks;
  const int64_t first = std::min(rank * per_block, packs), count = std::min(per_block, packs - first);
  const int64_t held = std::min(count, held_packs);
  const T* const run = src + head + first * E;  // 16-byte aligned
  T* const buf = reinterpret_cast<T*>(cluster_smem);

  // held packs [chunk_begin(c), chunk_begin(c + 1)) form commit group c; this thread's are
  // those congruent to tid modulo threads
  auto chunk_begin = [&](int c) { return held * c / kClusterChunks; };
  auto first_of = [&](int64_t lo) { return lo + ((tid - lo) % threads + threads) % threads; };
#pragma unroll
  for (int c = 0; c < kClusterChunks; ++c) {
    for (int64_t k = first_of(chunk_begin(c)); k < chunk_begin(c + 1); k += threads) copy16_async(buf + k * E, run + k * E);
    async_commit();
  }
  MaxSum acc = OnlineSoftmax::identity();
  auto add = [&](float v) { OnlineSoftmax::add(acc, v); };
  for_each_in_row(run + held * E, (count - held) * E, tid, threads, add);
  // the scalars: [0, head) and [tail, len), fewer than a pack each
  const int64_t scalar = rank == 0 ? 0 : tail, scalar_end = rank == blocks - 1 ? len : head;
  for (int64_t j = scalar + tid; j < scalar_end; j += threads)
    if (j < head || j >= tail) add(to_float(src[j]));
  // chunk c's (max, sum) while the later chunks are still landing: its max, then the sum of
  // exp(v - max) (none when the max is -inf: a part of -inf only, never exp(-inf - -inf))
  auto held_chunk = [&](int c) {
    float m = -kInf;
    for (int64_t k = first_of(chunk_begin(c)); k < chunk_begin(c + 1); k += threads) {
      const Pack<T, E> q = load_pack<E>(buf + k * E);
#pragma unroll
      for (int e = 0; e < E; ++e) m = nan_max(m, to_float(q.v[e]));
    }
    float s = 0.f;
    if (m != -kInf) {
      for (int64_t k = first_of(chunk_begin(c)); k < chunk_begin(c + 1); k += threads) {
        const Pack<T, E> q = load_pack<E>(buf + k * E);
#pragma unroll
        for (int e = 0; e < E; ++e) s += __expf(to_float(q.v[e]) - m);
      }
    }
    acc = OnlineSoftmax::apply(acc, MaxSum{m, s});
  };
  async_wait<3>();  // all groups but the newest 3: chunk 0
  held_chunk(0);
  async_wait<2>();
  held_chunk(1);
  async_wait<1>();
  held_chunk(2);
  async_wait<0>();
  held_chunk(3);
  const MaxSum mine = block_reduce<OnlineSoftmax>(acc, scratch);
  if (tid == 0) part = mine;
  cluster.sync();
  const int lane = tid & 31;
  MaxSum peer = OnlineSoftmax::identity();
  if (lane < blocks) peer = *cluster.map_shared_rank(&part, lane);
  const MaxSum total = warp_reduce<OnlineSoftmax>(peer);
  __cluster_barrier_arrive();  // this thread is done with the peers' shared memory (release)

  const float top = total.max, inv = 1.f / total.sum;
  auto softmax = [=](float v) { return __expf(v - top) * inv; };
  T* const out_run = dst + head + first * E;
  const bool packed = elements_to_alignment<E>(dst) == elements_to_alignment<E>(src);
  for (int64_t k = tid; k < held; k += threads) {
    const Pack<T, E> q = load_pack<E>(buf + k * E);
    Pack<T, E> r;
#pragma unroll
    for (int e = 0; e < E; ++e) r.v[e] = from_float<T>(softmax(to_float(q.v[e])));
    if (packed) {
      store_pack<E>(out_run + k * E, r);
    } else {
#pragma unroll
      for (int e = 0; e < E; ++e) out_run[k * E + e] = r.v[e];
    }
  }
  map_row(out_run + held * E, run + held * E, (count - held) * E, tid, threads, softmax);
  for (int64_t j = scalar + tid; j < scalar_end; j += threads)
    if (j < head || j >= tail) dst[j] = from_float<T>(softmax(to_float(src[j])));
  __cluster_barrier_wait();  // until every thread of the cluster arrived (cluster.sync(), split in two)
#endif
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

// RowGroups / ShortRows at `threads` per block, `lanes` per row. The grid: `waves` times
// the blocks resident (persistent, rows strided), fewer when there are fewer rows. Staging
// that does not fit in shared memory (or a block that cannot launch with it) runs without.
template <class T, int Packs, int Stages>
void launch_row_groups(const RowPlan& p, int lanes, int threads, int waves, const T* x, T* y, cudaStream_t s) {
  auto* kernel = softmax_row_groups<T, Packs, Stages>;
  const int groups = threads / lanes;
  const size_t smem = Stages >= 2 ? static_cast<size_t>(Stages) * groups * (p.row_len / kPack<T> * kPack<T>) * sizeof(T) : 0;
  const bool launchable = can_launch(reinterpret_cast<const void*>(kernel), threads, smem);
  const int fit = launchable ? resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), threads, smem) : 0;
  if (fit == 0) {
    if constexpr (Stages > 0) return launch_row_groups<T, Packs, 0>(p, lanes, threads, waves, x, y, s);
    fail(OPRT_STATUS_BAD_ATTRIBUTE, "softmax: a block of ", threads, " threads holding ", Packs * kPack<T>,
         " values each cannot launch on this GPU (OPRT_SOFTMAX_CONFIG: at most 512 threads * rows for vals above 16)");
  }
  const int64_t need = (p.rows + groups - 1) / groups;
  const int64_t grid = std::max<int64_t>(1, std::min<int64_t>(need, int64_t{fit} * sm_count() * waves));
  kernel<<<static_cast<unsigned>(grid), threads, smem, s>>>(p, lanes, x, y);
}

template <class T, int Stages>
void launch_row_groups(const RowPlan& p, const Launch& l, int waves, const T* x, T* y, cudaStream_t s) {
  switch (l.shape.packs) {
    case 1: return launch_row_groups<T, 1, Stages>(p, l.shape.lanes, l.threads, waves, x, y, s);
    case 2: return launch_row_groups<T, 2, Stages>(p, l.shape.lanes, l.threads, waves, x, y, s);
    case 4: return launch_row_groups<T, 4, Stages>(p, l.shape.lanes, l.threads, waves, x, y, s);
    // 8 packs per lane never prefetch into registers (shape_launch): no such instance
    default: return launch_row_groups<T, 8, Stages == 1 ? 0 : Stages>(p, l.shape.lanes, l.threads, waves, x, y, s);
  }
}

template <class T>
void launch(const RowPlan& p, const Launch& l, const T* x, T* y, MaxSum* parts, cudaStream_t s) {
  const unsigned threads = static_cast<unsigned>(l.threads);
  // Row kernels get several blocks per resident slot: on the H200 that measured faster
  // than a grid of exactly the resident blocks (4096x32768 f32: 0.29 ms against 0.60 ms).
  const int blocks_per_sm = std::max(1, 2048 / l.threads);
  switch (l.strategy) {
    case Strategy::Bulk:
      if (!launch_bulk<T>(p, l.threads, l.stages, x, y, s))  // no bulk copies here, or no room for two stages
        softmax_block_online<T><<<grid_for(p.rows, 1, 4), 1024, 0, s>>>(p, x, y);
      break;
    case Strategy::ShortRows:
      if (l.stages == 3) launch_row_groups<T, 3>(p, l, l.waves, x, y, s);
      else if (l.stages == 2) launch_row_groups<T, 2>(p, l, l.waves, x, y, s);
      else if (l.stages == 1) launch_row_groups<T, 1>(p, l, l.waves, x, y, s);
      else launch_row_groups<T, 0>(p, l, l.waves, x, y, s);
      break;
    case Strategy::RowGroups:
      // 16-bit rows only (the table picks it for them): no f32 instances to compile
      if constexpr (sizeof(T) == 2) {
        if (l.stages == 3) launch_row_groups<T, 3>(p, l, 1, x, y, s);
        else if (l.stages == 2) launch_row_groups<T, 2>(p, l, 1, x, y, s);
        else launch_row_groups<T, 0>(p, l, 4, x, y, s);  // no staging: more blocks than fit, as BlockCached
      }
      break;
    case Strategy::BlockCached:
      softmax_block_cached<T, kCached, kCachedThreads><<<grid_for(p.rows, 1, blocks_per_sm * 4), threads, 0, s>>>(p, x, y);
      break;
    case Strategy::BlockCachedWide:
      softmax_block_cached<T, kCachedWide, kCachedWideThreads><<<grid_for(p.rows, 1, blocks_per_sm * 4), threads, 0, s>>>(p, x, y);
      break;
    case Strategy::Staged: {
      auto* kernel = softmax_staged<T>;
      const size_t smem = static_cast<size_t>(kStages) * (p.row_len / kPack<T> * kPack<T>) * sizeof(T);
      const int64_t fit = resident_capacity(reinterpret_cast<const void*>(kernel), l.threads, smem);
      kernel<<<static_cast<unsigned>(std::min(p.rows, fit)), threads, smem, s>>>(p, x, y);
      break;
    }
    case Strategy::Cluster: {
      // choose_launch asked cluster_capacity for this shape on this device, which set the
      // kernel's shared memory limit and allowed a non-portable size
      const size_t smem = static_cast<size_t>(l.held_packs) * 16;
      cudaLaunchAttribute cluster_dim;
      const cudaLaunchConfig_t config =
          cluster_launch_config(static_cast<unsigned>(p.rows * l.cluster), l.cluster, smem, s, cluster_dim);
      check_cuda(cudaLaunchKernelEx(&config, softmax_cluster<T>, p, l.held_packs, x, y), "softmax kernel (cluster)");
      break;
    }
    case Strategy::Online:
      if (l.splits == 1) {
        softmax_block_online<T><<<grid_for(p.rows, 1, blocks_per_sm * 4), threads, 0, s>>>(p, x, y);
      } else {
        const unsigned grid = grid_for(p.rows * l.splits, 1, blocks_per_sm * 4);
        softmax_split_stats<T><<<grid, threads, 0, s>>>(p, l.splits, x, parts);
        softmax_split_write<T><<<grid, threads, 0, s>>>(p, l.splits, x, y, parts);
      }
      break;
    case Strategy::Columns:
      launch_column_tiles<T>(p, x, y, s);
      break;
    case Strategy::Strided:
      softmax_strided_rows<T><<<grid_for(p.rows, 1, 8), threads, 0, s>>>(p, x, y);
      break;
  }
  check_launch("softmax kernel");
}

}  // namespace

namespace oprt {
// The decision, made once: both launches kept in the descriptor; the workspace is what
// either needs.
size_t softmax_workspace_bytes(SoftmaxDescriptor& d) {
  const Overrides o = overrides_from_env();  // a bad override fails create even for an empty tensor
  if (d.plan.rows == 0 || d.plan.row_len == 0) return 0;
  auto launches = std::make_shared<SoftmaxLaunches>();
  launches->aligned = choose_launch(d.plan, d.dtype, true, o, sm_count());
  launches->unaligned = choose_launch(d.plan, d.dtype, false, o, sm_count());
  d.backend_plan = launches;
  return std::max(partial_bytes(d.plan, launches->aligned), partial_bytes(d.plan, launches->unaligned));
}
}  // namespace oprt

extern "C" OPRT_API oprt_status oprt_execute_softmax(const oprt_softmax_descriptor* desc, void* workspace,
                                                     size_t workspace_size, void* out, const void* in,
                                                     oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<SoftmaxDescriptor>(desc, workspace, workspace_size);
    if (d.plan.rows == 0 || d.plan.row_len == 0) return;
    require_buffers({{out, "out", true}, {in, "in", true}});
    const auto& launches = *static_cast<const SoftmaxLaunches*>(d.backend_plan.get());
    // Bulk, Staged and the staged row groups copy whole 16-byte chunks: rows aligned by the plan, bases here.
    const bool bases_aligned = reinterpret_cast<uintptr_t>(out) % 16 == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0;
    const Launch& l = bases_aligned ? launches.aligned : launches.unaligned;
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      launch<T>(d.plan, l, static_cast<const T*>(in), static_cast<T*>(out), static_cast<MaxSum*>(workspace),
                as_cuda_stream(stream));
    });
  });
}
