// softmax on NVIDIA GPUs: f32 math, torch's results for rows holding inf or NaN.
//
// choose_strategy() below is the whole decision:
//   contiguous rows (the innermost dim):
//     up to 1024 elements         ShortRows: a group of 1..32 lanes per row (16 values
//                                 per lane, 32 for rows past 512: short_shape), the row
//                                 in registers, several rows per warp, group shuffles only.
//                                 131072x256 f32 took 168.6 us through WarpCached (each
//                                 lane held 32 values, 24 of them padding) against
//                                 67.6 us for torch on the H200
//     up to 32 * 32 elements (old) a warp per row, the row held in registers: one read,
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
//   16-bit rows of 4096 to 8192 elements, a multiple of 8 and 16-byte aligned, on sm_90: Bulk
//     (softmax_bulk.cuh: whole rows moved by the copy engine into shared memory and back; 71%
//     of the copy ceiling at 8192x8192 f16 on the H200, 65% bf16)
//   other 16-bit rows of 4097 to 8192 elements: RowGroups, 512 threads x 16 values per row, two
//     stages (kDefaultConfig: 59% of the copy ceiling at 8192x8192 f16 on the H200, Staged 41%)
//   OPRT_SOFTMAX_CONFIG (see SoftmaxConfig) sets the launch shape of 16-bit rows past
//     1024 elements (RowGroups: threads per row, values per thread, rows per block, staging)
//     and ShortRows' lanes per row, prefetch and grid, to sweep them (scripts/softmax_sweep.py);
//   OPRT_SOFTMAX_STRATEGY=old brings back the choice before Staged and ShortRows (see Mode);
//   OPRT_SOFTMAX_STRATEGY=rowgrid reads long 16-byte aligned rows once instead (RowGrid: a
//     co-resident grid, rows cut into pieces of 32 KiB held in shared memory while the row's
//     (max, sum) is combined across blocks). Not the default: on the H200, 256 x 1048576 f32
//     took 1.24 ms against 0.94 ms for the online kernel's two reads (data/results/2026-12-03-h200-goals-long-sweep.json).
//   OPRT_SOFTMAX_STRATEGY=cluster reads long rows once through a thread-block cluster per
//     row (sm_90: Cluster, see softmax_cluster): each block holds its piece of the row in
//     shared memory, the blocks exchange their (max, sum) through distributed shared memory
//     (no global memory, no co-resident grid), then each writes its piece. The default for
//     rows of 2^20 elements and more (kClusterAutoMinRow); OPRT_SOFTMAX_CONFIG's cluster and
//     cluster_kib keys take it too, with that cluster size and shared memory per block.
//   strided rows whose neighbours are adjacent (a leading dim): Columns (softmax_columns.cuh),
//     a block per tile of adjacent columns, the walk down them split over its warps, 16-byte
//     packs of neighbouring columns where aligned; an online pass, then one that writes
//   anything else: a block per row, three strided passes.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
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

enum class Strategy { Bulk, ShortRows, RowGroups, WarpCached, BlockCached, BlockCachedWide, Staged, BlockOnline, SplitOnline, RowGrid, Cluster, Columns, Strided };

// OPRT_SOFTMAX_STRATEGY, read when a descriptor is created (kept in backend_variant):
//   auto    (default) RowGroups in kDefaultConfig's shape for the 16-bit rows it covers,
//           Staged for other 16-bit rows it fits
//   old     the strategies before Staged and RowGrid existed, to benchmark against
//   staged  Staged for every dtype it fits (f32 too); kDefaultConfig's RowGroups set aside
//   rowgrid as auto, and RowGrid for long rows it fits (measured slower so far: see the top)
//   bulk, bulk-512, ...  as auto, and Bulk (softmax_bulk.cuh: whole rows by the copy engine) for
//           the contiguous rows of 1025 elements to 64 KiB it takes; the names are kBulkShapes'
//   cluster as auto, and Cluster for every contiguous row past BlockCachedWide's (32768
//           elements) on sm_90 and later; where it cannot launch there, create and execute
//           fail naming it (a forced kernel that silently fell back would time the wrong one)
enum Mode : int { kAuto = 0, kOld = 1, kStagedAll = 2, kRowGrid = 3, kCluster = 4, kBulkFirst = 16 };

int mode_from_env() {
  const char* v = env_or("OPRT_SOFTMAX_STRATEGY", "auto");
  for (const auto [name, mode] : {std::pair{"auto", kAuto}, std::pair{"old", kOld}, std::pair{"staged", kStagedAll},
                                  std::pair{"rowgrid", kRowGrid}, std::pair{"cluster", kCluster}})
    if (std::strcmp(v, name) == 0) return mode;
  if (const BulkShape* b = bulk_shape(v)) return kBulkFirst + static_cast<int>(b - kBulkShapes);
  fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_SOFTMAX_STRATEGY=", v, " is not one of auto, old, staged, rowgrid, cluster, ",
       "bulk, bulk-512, bulk-128, bulk-256-2, bulk-256-6, bulk-1024");
}

struct Launch {
  Strategy strategy;
  int threads;
  int64_t splits;  // SplitOnline: blocks per row; RowGrid: pieces per row
  int64_t piece_len = 0;  // RowGrid: elements per piece
  unsigned grid = 0;      // RowGrid: co-resident blocks
  ShortShape shape{};     // ShortRows, RowGroups: threads per row (lanes), packs per thread
  int stages = 0;         // RowGroups, ShortRows: rows landing in shared memory per group (0: none;
                          // 1, ShortRows only: the next row's loads held in registers)
  int waves = 1;          // ShortRows: the grid in resident grids
  bool resident = false;  // RowGroups with stages: the values read from the stages, not held in registers
  int cluster = 0;        // Cluster: blocks per cluster (= per row)
  int64_t held_packs = 0; // Cluster: 16-byte packs of its piece each block holds in shared memory
};

// OPRT_SOFTMAX_CONFIG="threads=512,vals=16,rows=1,stages=2,resident=1,lanes=8,prefetch=1,waves=4",
// parsed once per descriptor (at create) into backend_params, key by key over
// kDefaultConfig; every key optional:
//   threads  threads per row of RowGroups (a power of two up to 32, or a multiple of 32)
//   vals     row values each of them holds in registers: 8, 16, 32 or 64
//   rows     rows per block (threads * rows <= 1024)
//   stages   0: none; 2 or 3: the group's next rows land in shared memory (cp.async)
//            meanwhile (rows 16-byte aligned, the shared memory fitting; else 0)
//   lanes    ShortRows' lanes per row (a power of two up to 32)
//   prefetch ShortRows' next row while it reduces this one: 0 none (default for float32); 1 its loads
//            issued into registers (as WarpCached); 2 or 3 stages in shared memory (cp.async,
//            rows 16-byte aligned; else none; 2 is the default for 16-bit rows)
//   resident 1: RowGroups with stages reads the row's values from shared memory in each
//            pass instead of holding them in registers (softmax_row_groups_resident: fewer
//            registers, more blocks per SM); 0 (default): held in registers
//   waves    ShortRows' grid in resident grids (default 64 for float32, 1 for 16-bit: 1 is persistent, each group striding
//            over the rows; more: the hardware hands out the blocks, no tail of groups that
//            got one row more than the others)
//   cluster  Cluster's blocks per cluster (2, 4, 8 or 16; default 16 where a cluster of 16
//            fits, else 8)
//   cluster_kib  Cluster's shared memory per block in KiB (0..227; default kClusterSmemBytes):
//            the part of each block's piece held there; the rest is read twice from global
//            memory. Either key given: contiguous rows past 32768 elements take Cluster
//            (sm_90 and later, where it fits; else the default choice)
// With threads, vals, rows or stages given in the environment, 16-bit contiguous rows of
// 1025 to threads * vals elements take RowGroups with them (the keys not given keep
// kDefaultConfig's values); from kDefaultConfig alone, only the rows longer than half of
// threads * vals (no thread left without values: the rows the sweep measured). Other rows keep the default choice. An
// invalid value fails create, naming the key.
struct SoftmaxConfig {
  // prefetch -1 and waves 0: not given, the built-in choice by dtype (choose_strategy)
  int threads = 512, vals = 16, rows = 1, stages = 0, lanes = 0, prefetch = -1, waves = 0, resident = 0;
  int cluster = 0, cluster_kib = -1;  // 0 and -1: not given
  int row_groups = 0;  // 0: none; kShapeGiven: threads, vals, rows or stages in the environment;
                       // kShapeBuiltIn: from kDefaultConfig only
};
constexpr int kShapeGiven = 1, kShapeBuiltIn = 2;
constexpr int kConfigParams = 11;

// The built-in launch shape, in OPRT_SOFTMAX_CONFIG's syntax. From the H200 sweep
// (data/results/2026-12-03-h200-goals-rows-sweep.json, scripts/softmax_sweep.py): 8192x8192 f16 took
// 0.1090 ms with 512 threads x 16 values per row, one row per block, two stages (59% of
// the copy ceiling, 2.38x torch) against 0.1571 ms through Staged (41%); bf16 the same
// (58%). OPRT_SOFTMAX_STRATEGY=staged (or old) sets it aside.
constexpr const char* kDefaultConfig = "threads=512,vals=16,rows=1,stages=2";

void config_from_env(int (&params)[kConfigParams]) {
  SoftmaxConfig c;
  int threads = 0, vals = 0, rows = 0, stages = -1;
  bool shape_given = false;
  const char* const texts[2] = {kDefaultConfig, env_or("OPRT_SOFTMAX_CONFIG", "")};
  for (const char* text : texts)  // the built-in keys, then the environment's over them
    parse_config("OPRT_SOFTMAX_CONFIG", text,
                 {{"threads", &threads, 1, 1024, false, true}, {"vals", &vals, 8, 64, true}, {"rows", &rows, 1, 1024},
                  {"stages", &stages, 0, 3}, {"lanes", &c.lanes, 1, 32, true}, {"prefetch", &c.prefetch, 0, 3},
                  {"waves", &c.waves, 1, 64}, {"resident", &c.resident, 0, 1}, {"cluster", &c.cluster, 2, 16, true},
                  {"cluster_kib", &c.cluster_kib, 0, 227}});
  for (const char* key : {"threads=", "vals=", "rows=", "stages="}) shape_given |= std::strstr(texts[1], key) != nullptr;
  const char* text = *texts[1] ? texts[1] : kDefaultConfig;
  if (stages == 1) fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_SOFTMAX_CONFIG=", text, ": stages=1 is not 0, 2 or 3");
  c.row_groups = shape_given ? kShapeGiven : (threads || vals || rows || stages >= 0) ? kShapeBuiltIn : 0;
  if (threads) c.threads = threads;
  if (vals) c.vals = vals;
  if (rows) c.rows = rows;
  if (stages >= 0) c.stages = stages;
  if (c.threads * c.rows > 1024 || c.threads * c.rows % 32 != 0)  // whole warps: the shuffles name all 32 lanes
    fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_SOFTMAX_CONFIG=", text, ": threads * rows = ", c.threads * c.rows,
         " threads per block is not a multiple of 32 up to 1024");
  params[0] = c.threads, params[1] = c.vals, params[2] = c.rows, params[3] = c.stages, params[4] = c.lanes;
  params[5] = c.row_groups, params[6] = c.prefetch, params[7] = c.waves, params[8] = c.resident;
  params[9] = c.cluster, params[10] = c.cluster_kib + 1;  // zeros: the defaults
}

SoftmaxConfig config_of(const int (&params)[kConfigParams]) {
  SoftmaxConfig c;
  if (params[0]) c.threads = params[0], c.vals = params[1], c.rows = params[2], c.stages = params[3];
  c.lanes = params[4];
  c.row_groups = params[5];
  c.prefetch = params[6];
  c.waves = params[7];
  c.resident = params[8];
  c.cluster = params[9];
  c.cluster_kib = params[10] - 1;
  return c;
}

constexpr int64_t kShortRowMax = 1024;  // ShortRows for rows up to this many elements
constexpr int kShortThreads = 256;

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

// Cluster: rows too long for registers, read once, on sm_90 and later. A cluster of
// `cluster` blocks per row (thread-block clusters): block r takes the r-th of `cluster`
// equal runs of the row's 16-byte packs and holds up to kClusterSmemBytes of them in
// shared memory (one block per SM at the default), the rest of its run streamed (read
// again when written, likely from L2). The blocks' (max, sum) meet through distributed
// shared memory after one cluster barrier: no counters in global memory and no
// co-resident grid as RowGrid needs, so the hardware schedules the clusters as SMs free up.
constexpr int kClusterThreads = 512;
constexpr int64_t kClusterSmemBytes = 224 * 1024;  // + ~0.3 KiB static: one block per SM (228 KiB)
// The held packs land in this many cp.async groups: each chunk's (max, sum) is computed
// while the later ones are in flight, instead of all of it after the last byte arrived.
constexpr int kClusterChunks = 4;
static_assert(kClusterChunks == 4, "softmax_cluster waits for each chunk by name (async_wait<3> .. <0>)");
// The default for rows of 2^20 elements and more (auto): Cluster with 8 blocks of 112 KiB each
// (two blocks per SM; the rest of each block's run is streamed and read twice). On the H200
// (data/results/2026-12-03-h200-goals-long-sweep.json) it beat the online
// kernel on every long row timed: 256x1048576 f32 0.834 against 0.888 ms, bf16 0.506 against
// 0.897 ms, 64x4194304 f32 0.926 against 0.980 ms. Holding more of the row (16 x 224 KiB, one
// block per SM) was slower than both: 1.07 ms at 256x1048576 f32. Shorter rows keep the online
// kernel (not timed against it).
constexpr int64_t kClusterAutoMinRow = int64_t{1} << 20;
constexpr int kClusterAutoBlocks = 8, kClusterAutoKib = 112;

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

ClusterShape cluster_shape(const RowPlan& p, oprt_dtype dtype, const SoftmaxConfig& cfg) {
  const int pack = 16 / dtype_bytes(dtype);
  const int64_t budget_packs = (cfg.cluster_kib >= 0 ? int64_t{cfg.cluster_kib} * 1024 : kClusterSmemBytes) / 16;
  for (const int blocks : {cfg.cluster ? cfg.cluster : 16, cfg.cluster ? 0 : 8}) {
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

Launch choose_strategy(const RowPlan& p, oprt_dtype dtype, int mode, const int (&params)[kConfigParams], int sms) {
  if (contiguous_rows(p)) {
    const int bytes = dtype_bytes(dtype), pack = 16 / bytes;
    const SoftmaxConfig cfg = config_of(params);
    const bool aligned = p.rows == 1 || rows_pack_aligned(p, pack);
    if (mode != kOld && p.row_len <= kShortRowMax) {
      ShortShape shape = short_shape(p.row_len, pack, cfg.lanes);
      if (shape.lanes == 0) shape = short_shape(p.row_len, pack);  // forced lanes too few for the row
      Launch l{Strategy::ShortRows, kShortThreads, 1};
      l.shape = shape;
      // Not given in the environment: the H200 sweep's best at 131072x256 (scripts/softmax_sweep.py,
      // data/results-log.md, 2026-12-03): float32 in over-subscribed grids (waves=64: 0.0685 ms, 1.01x
      // torch, against 0.0760 ms persistent), 16-bit rows staged two ahead in shared memory
      // (prefetch=2: bf16 0.0414 ms, 1.38x, against 0.0468 ms). Other row lengths were not timed so.
      const int prefetch = cfg.prefetch >= 0 ? cfg.prefetch : bytes == 4 ? 0 : 2;
      l.waves = cfg.waves ? cfg.waves : bytes == 4 ? 64 : 1;
      // register prefetch holds two rows: not with 8 packs per lane (128 values)
      l.stages = prefetch == 1 ? (shape.packs < 8 ? 1 : 0) : aligned ? prefetch : 0;
      return l;
    }
    // Bulk by default for the 16-bit rows of 4096..8192 it was timed on (scripts/softmax_sweep.py on
    // the H200, data/results/2026-12-03-h200-goals-bulk-sweep.json): 8192x8192 f16 71% of the copy ceiling
    // (RowGroups 60%), bf16 65% (59%), 16384x4096 f16 at 128 threads 70% (Staged 47%); float32
    // rows gained nothing there (89% against 88%), so they keep the register kernels.
    const bool bulk_auto = mode == kAuto && cfg.row_groups != kShapeGiven && bytes == 2 && p.row_len >= 4096 &&
                           p.row_len <= 8192 && has_bulk_copy();
    if ((mode >= kBulkFirst || bulk_auto) && aligned && p.row_len % pack == 0 && p.row_len * bytes <= kBulkMaxRowBytes) {
      const BulkShape b = mode >= kBulkFirst ? kBulkShapes[mode - kBulkFirst]
                                             : BulkShape{"auto", p.row_len <= 4096 ? 128 : 256, 4};
      Launch l{Strategy::Bulk, b.threads, 1};
      l.stages = b.stages;
      return l;
    }
    if (p.row_len <= 32 * kCached) return {Strategy::WarpCached, 128, 1};
    const int64_t shape_len = int64_t{cfg.threads} * cfg.vals;
    const bool row_groups = cfg.row_groups == kShapeGiven ||
                            (cfg.row_groups == kShapeBuiltIn && mode != kStagedAll && 2 * p.row_len > shape_len);
    if (mode != kOld && row_groups && bytes == 2 && p.row_len <= shape_len) {
      Launch l{Strategy::RowGroups, cfg.threads * cfg.rows, 1};
      l.shape = {cfg.threads, cfg.vals / pack};
      l.stages = aligned ? cfg.stages : 0;  // cp.async copies whole aligned packs
      l.resident = cfg.resident != 0;
      return l;
    }
    const bool staged = mode == kStagedAll || ((mode == kAuto || mode == kRowGrid || mode == kCluster) && bytes == 2);
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
    const bool cluster_forced = mode == kCluster || cfg.cluster != 0 || cfg.cluster_kib >= 0;
    if (cluster_forced || (mode == kAuto && p.row_len >= kClusterAutoMinRow)) {
      SoftmaxConfig shape = cfg;
      if (!cluster_forced) shape.cluster = kClusterAutoBlocks, shape.cluster_kib = kClusterAutoKib;
      const ClusterShape c = cluster_shape(p, dtype, shape);
      if (c.blocks) {
        Launch l{Strategy::Cluster, kClusterThreads, 1};
        l.cluster = c.blocks;
        l.held_packs = c.held_packs;
        return l;
      }
      if (cluster_forced && device_has_clusters())  // forced: never time another kernel under its name
        fail(OPRT_STATUS_DEVICE_ERROR, "softmax: OPRT_SOFTMAX_STRATEGY=cluster (or OPRT_SOFTMAX_CONFIG's cluster keys): no "
             "cluster of ", cfg.cluster ? std::to_string(cfg.cluster) : std::string("16 or 8"), " blocks holding up to ",
             cfg.cluster_kib >= 0 ? int64_t{cfg.cluster_kib} * 1024 : kClusterSmemBytes,
             " bytes of shared memory each can run on this GPU, or the library was built without sm_90 code");
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
  if (neighbours_adjacent(p)) return {Strategy::Columns, 1024, 1};  // at most: launch_column_tiles picks the warps
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

// RowGroups and ShortRows: rows handled by groups of `lanes` threads (a power of two up to
// 32, or a multiple of 32), blockDim.x / lanes rows per block at once, each thread holding
// Packs packs of its row in registers (CachedRow, lanes = the group). Groups up to a warp
// combine by shuffles; wider groups through shared memory with one __syncthreads per
// reduction (max and sum alternate between two scratch arrays, so no second barrier is
// needed before the next write). Stages > 0: each group's next Stages - 1 rows land in
// shared memory (cp.async) while it computes this one; each thread copies exactly the
// packs it will read, and has consumed its previous values before it refills a stage.
// Stages == 1 (ShortRows' prefetch=1): no shared memory; the group's next row's loads are
// issued into a second CachedRow before this row's reductions (as WarpCached's Prefetch),
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

// RowGroups with stages, the row's values left in shared memory (OPRT_SOFTMAX_CONFIG
// resident=1, 16-bit rows): each thread reads its packs from the stage three times (max,
// exp-sum, then exp again and the store) instead of holding them in registers. Why: the
// register kernel at 512 threads x 16 values uses 61 registers (ptxas -v, sm_90), so two
// blocks of 512 fit per SM (50% occupancy, ~43% achieved in the ncu of Staged): two rows in
// flight per SM beside the two in registers. Here one pack is live at a time, capped at 40
// registers (__launch_bounds__(512, 3); ptxas -v, sm_90: 24 bytes spilled at 512 x 16 with
// two stages, 4 with three): three blocks of 512 per SM, each with its stages in flight.
// Shared memory reads cost no DRAM or L2 traffic, and exp twice per value is within the
// SM's budget at these byte rates. Blocks above 512 threads cannot launch it: the register
// kernel runs them. Same arithmetic in the
// same order as CachedRow (max, then exp and sum by pack and element, then exp * 1 / sum),
// so the results are the register kernel's bit for bit. Each thread reads only the packs it
// copied, and has stored its last value from a stage before it refills it (the store needs
// the read), so no barrier guards the stages beyond the reductions'.
template <class T, int Packs, int Stages>
__global__ void __launch_bounds__(512, 3) softmax_row_groups_resident(RowPlan p, int lanes, const T* __restrict__ x,
                                                                     T* __restrict__ y) {
  static_assert(Stages >= 2, "the values live in the stages");
  constexpr int E = kPack<T>;
  extern __shared__ __align__(16) unsigned char resident_smem[];
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
  const int64_t stage_len = p.row_len / E * E;
  T* const stages = reinterpret_cast<T*>(resident_smem) + static_cast<int64_t>(g) * Stages * stage_len;
  auto issue = [&](int64_t row, int stage) {
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
  };
  const int64_t first = static_cast<int64_t>(blockIdx.x) * groups + g;
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) issue(first + s * step, s);
  int stage = 0;
  for (int64_t row0 = static_cast<int64_t>(blockIdx.x) * groups; row0 < p.rows; row0 += step) {
    const int64_t row = row0 + g;
    const bool valid = row < p.rows;
    const int64_t len = valid ? p.row_len : 0;  // 0: every value -inf, nothing read
    int64_t in_off = 0, out_off = 0;
    if (valid) p.row_offsets(row, in_off, out_off);
    issue(row + (Stages - 1) * step, (stage + Stages - 1) % Stages);
    async_wait<Stages - 1>();  // this row's group
    const T* const staged = stages + stage * stage_len;
    const T* const src = x + in_off;
    // pack k of this thread as floats: from the stage, a partial last pack from global,
    // -inf past the row (as CachedRow::load_staged)
    auto values = [&](int k, float (&v)[E]) {
      const int64_t base = (static_cast<int64_t>(k) * lanes + lane) * E;
      if (base + E <= len) {
        const Pack<T, E> q = load_pack<E>(staged + base);
#pragma unroll
        for (int e = 0; e < E; ++e) v[e] = to_float(q.v[e]);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) v[e] = base + e < len ? to_float(src[base + e]) : -kInf;
      }
    };
    float m = -kInf;
#pragma unroll 1  // one pack live at a time: the point of this kernel is few registers
    for (int k = 0; k < Packs; ++k) {
      float v[E];
      values(k, v);
#pragma unroll
      for (int e = 0; e < E; ++e) m = nan_max(m, v[e]);
    }
    m = reduce(NanMax{}, m, scratch[0]);
    float sum = 0.f;
#pragma unroll 1
    for (int k = 0; k < Packs; ++k) {
      float v[E];
      values(k, v);
#pragma unroll
      for (int e = 0; e < E; ++e) sum += __expf(v[e] - m);
    }
    sum = reduce(Sum{}, sum, scratch[1]);
    const float scale = 1.f / sum;
    if (valid) {
      T* const dst = y + out_off;
#pragma unroll 1
      for (int k = 0; k < Packs; ++k) {
        const int64_t base = (static_cast<int64_t>(k) * lanes + lane) * E;
        float v[E];
        values(k, v);
        if (base + E <= len) {
          Pack<T, E> q;
#pragma unroll
          for (int e = 0; e < E; ++e) q.v[e] = from_float<T>(__expf(v[e] - m) * scale);
          store_pack<E>(dst + base, q);
        } else {
#pragma unroll
          for (int e = 0; e < E; ++e)
            if (base + e < len) dst[base + e] = from_float<T>(__expf(v[e] - m) * scale);
        }
      }
    }
    stage = (stage + 1) % Stages;
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
template <class T, int Packs, int Stages, bool Resident = false>
void launch_row_groups(const RowPlan& p, int lanes, int threads, int waves, const T* x, T* y, cudaStream_t s) {
  auto* kernel = [] {  // only the instances launched are compiled
    if constexpr (Resident) return softmax_row_groups_resident<T, Packs, Stages>;
    else return softmax_row_groups<T, Packs, Stages>;
  }();
  const int groups = threads / lanes;
  const size_t smem = Stages >= 2 ? static_cast<size_t>(Stages) * groups * (p.row_len / kPack<T> * kPack<T>) * sizeof(T) : 0;
  const bool launchable = can_launch(reinterpret_cast<const void*>(kernel), threads, smem);
  const int fit = launchable ? resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), threads, smem) : 0;
  if (fit == 0) {
    if constexpr (Resident) return launch_row_groups<T, Packs, Stages>(p, lanes, threads, waves, x, y, s);
    if constexpr (Stages > 0) return launch_row_groups<T, Packs, 0>(p, lanes, threads, waves, x, y, s);
    fail(OPRT_STATUS_BAD_ATTRIBUTE, "softmax: a block of ", threads, " threads holding ", Packs * kPack<T>,
         " values each cannot launch on this GPU (OPRT_SOFTMAX_CONFIG: at most 512 threads * rows for vals above 16)");
  }
  const int64_t need = (p.rows + groups - 1) / groups;
  const int64_t grid = std::max<int64_t>(1, std::min<int64_t>(need, int64_t{fit} * sm_count() * waves));
  kernel<<<static_cast<unsigned>(grid), threads, smem, s>>>(p, lanes, x, y);
}

template <class T, int Stages, bool Resident = false>
void launch_row_groups(const RowPlan& p, const Launch& l, int waves, const T* x, T* y, cudaStream_t s) {
  switch (l.shape.packs) {
    case 1: return launch_row_groups<T, 1, Stages, Resident>(p, l.shape.lanes, l.threads, waves, x, y, s);
    case 2: return launch_row_groups<T, 2, Stages, Resident>(p, l.shape.lanes, l.threads, waves, x, y, s);
    case 4: return launch_row_groups<T, 4, Stages, Resident>(p, l.shape.lanes, l.threads, waves, x, y, s);
    // 8 packs per lane never prefetch into registers (choose_strategy): no such instance
    default: return launch_row_groups<T, 8, Stages == 1 ? 0 : Stages, Resident>(p, l.shape.lanes, l.threads, waves, x, y, s);
  }
}

template <class T>
void launch(const RowPlan& p, Launch l, const T* x, T* y, MaxSum* parts, cudaStream_t s) {
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
        if (l.stages == 3 && l.resident) launch_row_groups<T, 3, true>(p, l, 1, x, y, s);
        else if (l.stages == 2 && l.resident) launch_row_groups<T, 2, true>(p, l, 1, x, y, s);
        else if (l.stages == 3) launch_row_groups<T, 3>(p, l, 1, x, y, s);
        else if (l.stages == 2) launch_row_groups<T, 2>(p, l, 1, x, y, s);
        else launch_row_groups<T, 0>(p, l, 4, x, y, s);  // no staging: more blocks than fit, as BlockCached
      }
      break;
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
    case Strategy::Cluster: {
      // choose_strategy asked cluster_capacity for this shape on this device, which set the
      // kernel's shared memory limit and allowed a non-portable size
      const size_t smem = static_cast<size_t>(l.held_packs) * 16;
      cudaLaunchAttribute cluster_dim;
      const cudaLaunchConfig_t config =
          cluster_launch_config(static_cast<unsigned>(p.rows * l.cluster), l.cluster, smem, s, cluster_dim);
      check_cuda(cudaLaunchKernelEx(&config, softmax_cluster<T>, p, l.held_packs, x, y), "softmax kernel (cluster)");
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
size_t softmax_workspace_bytes(SoftmaxDescriptor& d) {
  d.backend_variant = mode_from_env();
  config_from_env(d.backend_params);
  if (d.plan.rows == 0 || d.plan.row_len == 0) return 0;
  return partial_bytes(d.plan, choose_strategy(d.plan, d.dtype, d.backend_variant, d.backend_params, sm_count()));
}
}  // namespace oprt

extern "C" OPRT_API oprt_status oprt_execute_softmax(const oprt_softmax_descriptor* desc, void* workspace,
                                                     size_t workspace_size, void* out, const void* in,
                                                     oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<SoftmaxDescriptor>(desc, workspace, workspace_size);
    if (d.plan.rows == 0 || d.plan.row_len == 0) return;
    require_buffers({{out, "out", true}, {in, "in", true}});
    Launch l = choose_strategy(d.plan, d.dtype, d.backend_variant, d.backend_params, sm_count());
    if (partial_bytes(d.plan, l) > workspace_size) l = {Strategy::BlockOnline, 1024, 1};  // another GPU than at create
    // Staged and RowGrid copy whole 16-byte chunks: rows aligned by the plan, bases here.
    const bool bases_aligned = reinterpret_cast<uintptr_t>(out) % 16 == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0;
    // Bulk copies whole rows from 16-byte boundaries: with a base off one, what old chose (no
    // staging of whole chunks either)
    if ((l.strategy == Strategy::Staged || l.strategy == Strategy::Bulk) && !bases_aligned)
      l = choose_strategy(d.plan, d.dtype, kOld, d.backend_params, sm_count());
    if ((l.strategy == Strategy::RowGroups || l.strategy == Strategy::ShortRows) && !bases_aligned && l.stages >= 2)
      l.stages = 0;
    if (l.strategy == Strategy::RowGrid && !bases_aligned) l = {Strategy::BlockOnline, 1024, 1};
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      launch<T>(d.plan, l, static_cast<const T*>(in), static_cast<T*>(out), static_cast<MaxSum*>(workspace),
                as_cuda_stream(stream));
    });
  });
}
