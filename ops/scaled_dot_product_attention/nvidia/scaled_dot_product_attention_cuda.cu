// scaled_dot_product_attention on NVIDIA GPUs. Three kernels, chosen at create:
// - wgmma (sm90/attention_wgmma.cu): f16/bf16, D = Dv of 64 or 128, 16-byte rows, compute
//   capability 9.0, for prefill: at least one full 128-row query tile per KV head, and tiles
//   enough to give every SM a block.
// - mma.sync tensor cores (attention_mma.cuh): f16/bf16, 16-byte rows, D = Dv any multiple of 8 up to
//   128 (on a head-dim tile of 32, 64, 96 or 128), sm_80+; with key splits and a combine pass when the
//   query tiles alone leave SMs idle (decode, few heads).
//   Execute falls back to the kernel below when a base pointer is not 16-byte aligned.
// - CUDA cores (below): every dtype, head dim and stride; f32 always. Key splits as for mma.sync
//   when its query tiles leave SMs idle (decode), merged by the same combine pass.
// OPRT_ATTENTION_STRATEGY, read at create: auto (default), cuda-cores (the kernel below alone: the
// chapter's baseline), no-split (mma.sync tensor cores without key splits), mma (auto without
// wgmma), wgmma (wgmma wherever it can run, however few tiles: how the tests reach it).
//
// The CUDA-core kernel, a FlashAttention-2-style forward, the simple, obviously correct form:
// - One block per (batch * head, tile of BM = 64 query rows), 256 threads: 4 threads per query
//   row. The block stages its query tile in shared memory (f32) once, then walks the keys in
//   tiles of BN = 32: each key and value tile is converted to f32 into shared memory by the whole
//   block (any strides, 64-bit offsets, zeros past Sk), then each thread computes the scores of
//   8 of its row's 32 keys (dot products over D from shared memory), the row's 4 threads combine
//   max and sum by warp shuffles, and each thread updates its slice of the row's output
//   accumulator (Dv / 4 values in registers, f32) with the online softmax: the running max m and
//   sum l, the accumulator rescaled by exp(m_old - m_new) once per tile. The result is acc / l,
//   rounded once to out's dtype.
// - Causal (torch's top-left mask: row i sees keys 0..i): a tile stops at the keys its last row
//   sees (later key tiles are skipped), and scores a row does not see are -inf. Every row sees
//   key 0, so l > 0; Sk = 0 writes torch's zeros. Rows past Sq (the last tile's tail) compute on
//   zeros and are not stored.
// - GQA: query head h reads key/value head h / (H / Hkv).
// - Split-KV: with `partial` set, block (.., split) walks keys [split * keys_per_split, ...) and
//   writes its unnormalised accumulator with the row's max (in log2 units, as attention_mma's
//   combine_kernel reads it) and sum; a split past a causal row's keys writes max -inf.
// - Shared memory rows are padded by one float (conflict-free column walks); D is limited by the
//   device's shared memory per block (D = Dv = 128: 73 KiB, 256: 137 KiB), Dv by the registers
//   (<= 256). Larger head dims are refused at create (OPRT_STATUS_NOT_SUPPORTED).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "attention_mma.cuh"
#include "attention_wgmma.h"
#include "cuda_launch.cuh"
#include "scaled_dot_product_attention_descriptor.h"

using namespace oprt;

namespace {
constexpr int BM = 64, BN = 32, THREADS = 256, LANES = THREADS / BM;  // LANES threads per query row
constexpr int KEYS_PER_LANE = BN / LANES;
constexpr int64_t kMaxDv = 256;
static_assert(LANES == 4 && BN % LANES == 0, "a row's threads are 4 adjacent lanes of one warp");

size_t smem_bytes(const AttentionPlan& p) {
  const int64_t dp = p.d + 1, dvp = p.dv + 1;
  return static_cast<size_t>(BM * dp + BN * dp + BN * dvp + BM * (BN + 1)) * sizeof(float);
}

// A kernel's key splits, decided at create (splits = 1: none; > 1: partial results and a combine pass).
struct KeySplits {
  int splits = 1;
  int64_t tiles_per_split = 0;  // key tiles (of the kernel's own tile length) per split
};

// The tensor-core kernel's launch, decided at create.
struct TensorCorePlan {
  bool wgmma = false;           // the sm_90a kernel (attention_wgmma.h), no key splits
  bool wgmma_forced = false;    // OPRT_ATTENTION_STRATEGY=wgmma: a call it declines is an error, not a fallback
  int head_dim = 0;             // the mma.sync kernel's head-dim tile (attention_mma::head_dim_tile)
  int block_rows = 64;          // query rows per block (64: 4 warps, two blocks per SM; 128: 8 warps, one)
  KeySplits split;              // of attention_mma::BN-key tiles
};

enum class Strategy { kAuto, kCudaCores, kNoSplit, kMma, kWgmma };

Strategy strategy_from_env() {
  const char* v = env_or("OPRT_ATTENTION_STRATEGY", "auto");
  if (std::strcmp(v, "auto") == 0) return Strategy::kAuto;
  if (std::strcmp(v, "cuda-cores") == 0) return Strategy::kCudaCores;
  if (std::strcmp(v, "no-split") == 0) return Strategy::kNoSplit;
  if (std::strcmp(v, "mma") == 0) return Strategy::kMma;
  if (std::strcmp(v, "wgmma") == 0) return Strategy::kWgmma;
  fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_ATTENTION_STRATEGY=", v, " is not one of auto, cuda-cores, no-split, mma, wgmma");
}

// ldmatrix and cp.async move 16 bytes: contiguous features, every other stride a multiple of 8 elements.
bool has_16_byte_rows(const AttentionOperand& a, int batch_rank) {
  bool ok = a.dim == 1 && a.seq % 8 == 0 && a.head % 8 == 0;
  for (int i = 0; i < batch_rank; ++i) ok = ok && a.batch[i] % 8 == 0;
  return ok;
}

bool aligned_16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// What create decides for execute: the tensor-core plan (null: the CUDA-core kernel alone) and the
// CUDA-core kernel's splits (it is also the fallback of a tensor-core call with unaligned pointers).
struct KernelPlans {
  std::optional<TensorCorePlan> tc;
  KeySplits core;  // of BN-key tiles
};

// Key splits for a grid of `blocks` over `tiles` (> 0) key tiles, where the strategy allows them
// (auto, mma): none when the grid fills the SMs, else until about two blocks per SM, each split
// keeping at least 4 tiles (the combine stays small).
KeySplits split_keys(Strategy strategy, int64_t blocks, int64_t tiles) {
  int64_t splits = 1;
  if ((strategy == Strategy::kAuto || strategy == Strategy::kMma) && blocks < sm_count())
    splits = std::max<int64_t>(1, std::min<int64_t>((2 * sm_count() + blocks - 1) / blocks, tiles / 4));
  KeySplits split;
  split.tiles_per_split = (tiles + splits - 1) / splits;
  split.splits = static_cast<int>((tiles + split.tiles_per_split - 1) / split.tiles_per_split);
  return split;
}

size_t partial_bytes(const AttentionPlan& p, int splits) {  // [split][row][Dv] accumulators, [split][row] (max, sum)
  return splits > 1 ? static_cast<size_t>(splits) * p.batch * p.heads * p.sq * (p.dv + 2) * sizeof(float) : 0;
}

// Tensor cores where the dtype, head dims, layout and GPU allow. On compute capability 9.0 the
// wgmma kernel when its query tiles alone give every SM a block; otherwise mma.sync, with key splits
// until the grid has about two blocks per SM (each split keeps at least 4 key tiles, so the combine
// pass stays small).
std::optional<TensorCorePlan> plan_tensor_cores(const AttentionDescriptor& d, Strategy strategy) {
  const AttentionPlan& p = d.plan;
  if (strategy == Strategy::kCudaCores || d.dtype == OPRT_DTYPE_F32 || p.d != p.dv ||
      attention_mma::head_dim_tile(p.d) == 0)
    return std::nullopt;
  if (!has_16_byte_rows(p.q, p.batch_rank) || !has_16_byte_rows(p.k, p.batch_rank) ||
      !has_16_byte_rows(p.v, p.batch_rank) || compute_capability_major() < 8)
    return std::nullopt;
  std::optional<TensorCorePlan> plan(std::in_place);
  plan->head_dim = attention_mma::head_dim_tile(p.d);
  const bool wide_tiles = plan->head_dim == 64 || plan->head_dim == 128;  // the 128-row experiment's instantiations
  const int64_t kv_tiles = (p.sk + attention_mma::BN - 1) / attention_mma::BN;
  plan->block_rows = wide_tiles && std::atoi(env_or("OPRT_ATTENTION_BLOCK_ROWS", "64")) == 128 ? 128 : 64;
  const int64_t blocks = p.batch * p.kv_heads * ((p.group * p.sq + plan->block_rows - 1) / plan->block_rows);
  plan->split = split_keys(strategy, blocks, kv_tiles);
#ifdef OPRT_HAVE_WGMMA
  // The mma.sync plan above stays complete: execute falls back to it where the wgmma launcher
  // declines (key / value strides TMA cannot describe). auto: prefill only. A KV head with fewer
  // packed query rows than one tile (decode: Sq of 1..16 times the group) would multiply mostly
  // padding; those, and grids that leave SMs idle, stay on mma.sync with its key splits.
  const int64_t wgmma_blocks =
      p.batch * p.kv_heads * ((p.group * p.sq + kAttentionWgmmaRows - 1) / kAttentionWgmmaRows);
  const bool prefill = p.group * p.sq >= kAttentionWgmmaRows && wgmma_blocks >= sm_count();
  // TMA maps one batch dim and steps over memory: keys and values repeated by a zero stride stay on mma.sync
  const bool tma_layout = p.batch_rank <= 1 && p.k.seq && p.k.head && p.v.seq && p.v.head &&
                          (p.batch_rank == 0 || (p.k.batch[0] && p.v.batch[0]));
  plan->wgmma = p.sk > 0 && (p.d == 64 || p.d == 128) && tma_layout && compute_capability_major() == 9 &&
                (strategy == Strategy::kWgmma || (strategy == Strategy::kAuto && prefill));
  plan->wgmma_forced = plan->wgmma && strategy == Strategy::kWgmma;
#endif
  return plan;
}

int max_smem_optin() {
  int device = 0, bytes = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
             "cudaDeviceGetAttribute (shared memory per block)");
  return bytes;
}
}  // namespace

namespace oprt {
size_t scaled_dot_product_attention_workspace_bytes(AttentionDescriptor& d) {
  const AttentionPlan& p = d.plan;
  if (p.empty() || p.sk == 0) return 0;
  if (p.dv > kMaxDv)
    fail(OPRT_STATUS_NOT_SUPPORTED, "scaled_dot_product_attention: the nvidia kernel keeps value's last dim in "
         "registers, up to ", kMaxDv, "; value has ", p.dv);
  const size_t need = smem_bytes(p), have = static_cast<size_t>(max_smem_optin());
  if (need > have)
    fail(OPRT_STATUS_NOT_SUPPORTED, "scaled_dot_product_attention: head dims D=", p.d, ", Dv=", p.dv, " need ", need,
         " bytes of shared memory per block; this GPU has ", have);
  const int64_t blocks = p.batch * p.heads * ((p.sq + BM - 1) / BM);
  if (blocks > INT32_MAX)
    fail(OPRT_STATUS_NOT_SUPPORTED, "scaled_dot_product_attention: ", blocks, " query tiles exceed one grid");
  const Strategy strategy = strategy_from_env();
  auto plans = std::make_shared<KernelPlans>();
  plans->tc = plan_tensor_cores(d, strategy);
  plans->core = split_keys(strategy, blocks, (p.sk + BN - 1) / BN);
  d.backend_plan = plans;
  // one workspace for the tensor-core call and for its fallback to CUDA cores
  return std::max(plans->tc ? partial_bytes(p, plans->tc->split.splits) : 0, partial_bytes(p, plans->core.splits));
}
}  // namespace oprt

namespace {

template <class T, int DV_MAX>
__global__ void __launch_bounds__(THREADS) attention_kernel(const T* __restrict__ q, const T* __restrict__ k,
                                                           const T* __restrict__ v, T* __restrict__ out,
                                                           const AttentionPlan p, const int64_t q_tiles,
                                                           const int64_t keys_per_split, float* __restrict__ partial) {
  extern __shared__ float smem[];
  const int64_t d = p.d, dv = p.dv, dp = d + 1, dvp = dv + 1;
  float* qs = smem;          // [BM][d + 1]
  float* ks = qs + BM * dp;  // [BN][d + 1]
  float* vs = ks + BN * dp;  // [BN][dv + 1]
  float* ps = vs + BN * dvp; // [BM][BN + 1]: the tile's probabilities

  // Longest causal tiles first: the last query tile of each (batch, head) has the most keys.
  const int64_t bh = blockIdx.x / q_tiles, tile = q_tiles - 1 - blockIdx.x % q_tiles;
  const int64_t z = bh / p.heads, h = bh % p.heads, kv_head = h / p.group;
  int64_t qo, ko, vo, oo;
  p.batch_offsets(z, qo, ko, vo, oo);
  const T* qh = q + qo + h * p.q.head;
  const T* kh = k + ko + kv_head * p.k.head;
  const T* vh = v + vo + kv_head * p.v.head;
  const int64_t i0 = tile * BM;
  const int tid = threadIdx.x, r = tid / LANES, lane = tid % LANES;
  const int64_t row = i0 + r;

  for (int64_t e = tid; e < BM * d; e += THREADS) {
    const int64_t rr = e / d, c = e % d;
    qs[rr * dp + c] = i0 + rr < p.sq ? to_float(qh[(i0 + rr) * p.q.seq + c * p.q.dim]) : 0.f;
  }
  float acc[DV_MAX / LANES];
#pragma unroll
  for (int i = 0; i < DV_MAX / LANES; ++i) acc[i] = 0.f;
  float m = -INFINITY, l = 0.f;
  const int64_t row_keys = row < p.sq ? p.key_end(row) : 0;                  // keys this row sees
  const int64_t tile_keys = p.key_end((i0 + BM < p.sq ? i0 + BM : p.sq) - 1);  // ... the tile's last row
  const int64_t k_begin = blockIdx.y * keys_per_split;                            // this split's keys
  const int64_t keys = k_begin + keys_per_split < tile_keys ? k_begin + keys_per_split : tile_keys;

  for (int64_t j0 = k_begin; j0 < keys; j0 += BN) {
    __syncthreads();  // the previous tile's ks, vs and ps are read (and qs is written, the first time)
    for (int64_t e = tid; e < BN * d; e += THREADS) {
      const int64_t j = e / d, c = e % d;
      ks[j * dp + c] = j0 + j < keys ? to_float(kh[(j0 + j) * p.k.seq + c * p.k.dim]) : 0.f;
    }
    for (int64_t e = tid; e < BN * dv; e += THREADS) {
      const int64_t j = e / dv, c = e % dv;
      vs[j * dvp + c] = j0 + j < keys ? to_float(vh[(j0 + j) * p.v.seq + c * p.v.dim]) : 0.f;
    }
    __syncthreads();

    // This thread's keys of the tile: lane, lane + 4, ..., their scores -inf where the row does not see them.
    float s[KEYS_PER_LANE];
    float tile_max = -INFINITY;
#pragma unroll
    for (int t = 0; t < KEYS_PER_LANE; ++t) {
      const int j = lane + LANES * t;
      const float* qr = qs + r * dp;
      const float* kr = ks + j * dp;
      float dot = 0.f;
      for (int64_t c = 0; c < d; ++c) dot = fmaf(qr[c], kr[c], dot);
      s[t] = j0 + j < row_keys ? dot * p.scale : -INFINITY;
      tile_max = fmaxf(tile_max, s[t]);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
    const float m_new = fmaxf(m, tile_max);
    // m_new = -inf: the row has seen no key yet (causal, or a row past Sq): nothing to add or rescale
    const bool none = m_new == -INFINITY;
    const float correction = none ? 1.f : expf(m - m_new);  // expf(-inf) = 0 at the row's first keys
    float sum = 0.f;
#pragma unroll
    for (int t = 0; t < KEYS_PER_LANE; ++t) {
      const float pr = none ? 0.f : expf(s[t] - m_new);
      ps[r * (BN + 1) + lane + LANES * t] = pr;
      sum += pr;
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    l = l * correction + sum;
    m = m_new;
    __syncwarp();  // the row's probabilities, written by its 4 lanes, are read by all 4
    const float* pr = ps + r * (BN + 1);
#pragma unroll
    for (int i = 0; i < DV_MAX / LANES; ++i) {
      const int64_t e = lane + LANES * i;
      if (e < dv) {
        float a = acc[i] * correction;
        for (int j = 0; j < BN; ++j) a = fmaf(pr[j], vs[j * dvp + e], a);
        acc[i] = a;
      }
    }
  }
  if (row >= p.sq) return;
  if (partial) {  // this split's share, in combine_kernel's layout
    const int64_t all_rows = p.batch * p.heads * p.sq, at = blockIdx.y * all_rows + (z * p.heads + h) * p.sq + row;
    float* po = partial + at * dv;
#pragma unroll
    for (int i = 0; i < DV_MAX / LANES; ++i) {
      const int64_t e = lane + LANES * i;
      if (e < dv) po[e] = acc[i];
    }
    if (lane == 0) {
      float* ml = partial + gridDim.y * all_rows * dv + 2 * at;
      ml[0] = m * kLog2e, ml[1] = l;  // m = -inf: a split holding none of the row's keys
    }
    return;
  }
  T* orow = out + oo + h * p.o.head + row * p.o.seq;
#pragma unroll
  for (int i = 0; i < DV_MAX / LANES; ++i) {
    const int64_t e = lane + LANES * i;
    if (e < dv) orow[e * p.o.dim] = from_float<T>(acc[i] / l);
  }
}

// Sk = 0: every row is a softmax over no keys; torch returns zeros there.
template <class T>
__global__ void zeros_kernel(T* out, const AttentionPlan p, const int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = i % p.dv, row = i / p.dv % p.sq, h = i / p.dv / p.sq % p.heads, z = i / p.dv / p.sq / p.heads;
    int64_t qo, ko, vo, oo;
    p.batch_offsets(z, qo, ko, vo, oo);
    out[oo + h * p.o.head + row * p.o.seq + e * p.o.dim] = from_float<T>(0.f);
  }
}

template <class T, int DV_MAX>
void launch(const AttentionPlan& p, const KeySplits& plan, const T* q, const T* k, const T* v, T* out,
            float* workspace, cudaStream_t stream) {
  auto* kernel = attention_kernel<T, DV_MAX>;
  const size_t smem = smem_bytes(p);
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
  const int64_t q_tiles = (p.sq + BM - 1) / BM;
  float* partial = plan.splits > 1 ? workspace : nullptr;
  const dim3 grid(static_cast<unsigned>(p.batch * p.heads * q_tiles), static_cast<unsigned>(plan.splits));
  kernel<<<grid, THREADS, smem, stream>>>(q, k, v, out, p, q_tiles, plan.tiles_per_split * BN, partial);
  check_launch("scaled_dot_product_attention kernel");
  if (!partial) return;
  const int64_t n = p.batch * p.heads * p.sq * p.dv;
  attention_mma::combine_kernel<T><<<grid_for(n, 256), 256, 0, stream>>>(partial, out, p, plan.splits);
  check_launch("scaled_dot_product_attention combine kernel");
}

template <class T, int HD, int BM>
void launch_tensor_cores(const AttentionPlan& p, const TensorCorePlan& plan, const T* q, const T* k, const T* v,
                         T* out, float* workspace, cudaStream_t stream) {
  using namespace attention_mma;
  auto* kernel = attention_mma_kernel<T, HD, BM>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), Smem<HD, BM>::bytes);
  const int64_t q_tiles = (p.group * p.sq + BM - 1) / BM;  // tiles of a KV head's packed query rows
  const KeySplits& split = plan.split;
  float* partial = split.splits > 1 ? workspace : nullptr;
  const dim3 grid(static_cast<unsigned>(p.batch * p.kv_heads * q_tiles), static_cast<unsigned>(split.splits));
  kernel<<<grid, threads<BM>(), Smem<HD, BM>::bytes, stream>>>(q, k, v, out, p, q_tiles, split.tiles_per_split, partial);
  check_launch("scaled_dot_product_attention tensor-core kernel");
  if (!partial) return;
  const int64_t n = p.batch * p.heads * p.sq * p.dv;
  combine_kernel<T><<<grid_for(n, 256), 256, 0, stream>>>(partial, out, p, split.splits);
  check_launch("scaled_dot_product_attention combine kernel");
}

template <class T>
void run(const AttentionPlan& p, oprt_dtype dtype, const KernelPlans* plans, const T* q, const T* k, const T* v,
         T* out, void* workspace, cudaStream_t stream) {
  if (p.sk == 0) {
    const int64_t n = p.batch * p.heads * p.sq * p.dv;
    zeros_kernel<T><<<grid_for(n, 256), 256, 0, stream>>>(out, p, n);
    return check_launch("scaled_dot_product_attention zeros kernel");
  }
  // create plans every call that has keys (for Sk = 0 it returns before planning: backend_plan is null)
  const TensorCorePlan* tc = plans->tc ? &*plans->tc : nullptr;
  if constexpr (sizeof(T) == 2) {
    if (tc && aligned_16(q) && aligned_16(k) && aligned_16(v)) {
#ifdef OPRT_HAVE_WGMMA
      if (tc->wgmma && attention_wgmma(p, dtype, q, k, v, out, stream)) return;
      if (tc->wgmma && tc->wgmma_forced)  // the tests force it: a silent fallback would hide what ran
        fail(OPRT_STATUS_NOT_SUPPORTED, "scaled_dot_product_attention: OPRT_ATTENTION_STRATEGY=wgmma, but the "
             "wgmma kernel declined this call (not compute capability 9.0, or key / value strides TMA cannot map)");
#endif
      float* partial = static_cast<float*>(workspace);
      if (tc->block_rows == 128) {  // an experiment (OPRT_ATTENTION_BLOCK_ROWS=128)
        if (tc->head_dim == 64) return launch_tensor_cores<T, 64, 128>(p, *tc, q, k, v, out, partial, stream);
        return launch_tensor_cores<T, 128, 128>(p, *tc, q, k, v, out, partial, stream);
      }
      switch (tc->head_dim) {
        case 32: return launch_tensor_cores<T, 32, 64>(p, *tc, q, k, v, out, partial, stream);
        case 64: return launch_tensor_cores<T, 64, 64>(p, *tc, q, k, v, out, partial, stream);
        case 96: return launch_tensor_cores<T, 96, 64>(p, *tc, q, k, v, out, partial, stream);
        default: return launch_tensor_cores<T, 128, 64>(p, *tc, q, k, v, out, partial, stream);
      }
    }
  }
  float* partial = static_cast<float*>(workspace);
  if (p.dv <= 64) return launch<T, 64>(p, plans->core, q, k, v, out, partial, stream);
  if (p.dv <= 128) return launch<T, 128>(p, plans->core, q, k, v, out, partial, stream);
  launch<T, kMaxDv>(p, plans->core, q, k, v, out, partial, stream);
}
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_scaled_dot_product_attention(
    const oprt_scaled_dot_product_attention_descriptor* desc, void* workspace, size_t workspace_size, void* out,
    const void* query, const void* key, const void* value, oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<AttentionDescriptor>(desc, workspace, workspace_size);
    const AttentionPlan& p = d.plan;
    if (p.empty()) return;
    require_attention_buffers(p, out, query, key, value);
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      run(p, d.dtype, static_cast<const KernelPlans*>(d.backend_plan.get()), static_cast<const T*>(query),
          static_cast<const T*>(key), static_cast<const T*>(value), static_cast<T*>(out), workspace,
          as_cuda_stream(stream));
    });
  });
}
