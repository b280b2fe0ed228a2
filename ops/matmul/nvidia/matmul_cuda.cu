// matmul on NVIDIA GPUs: f32 accumulation, the result rounded once to out's dtype.
//
// Four kernels, chosen per call:
// - Tensor cores (f16/bf16 on sm_80+): a 128 x 128 block tile (128 x 256 for large outputs), K
//   in steps of 32, 8 warps of 64 x 32 (64 x 64) each, mma.sync m16n8k16 with f32 accumulators
//   in registers. Operand tiles reach shared memory by cp.async, STAGES deep (the loads of steps k+1, k+2 fly while step k
//   multiplies), and registers by ldmatrix (.trans for the operand whose K is not contiguous).
//   Each operand may be row- or column-major (4 instantiations); what it needs is 16-byte rows:
//   a contiguous dim, a leading stride and batch stride that are multiples of 8 elements, and a
//   16-byte aligned pointer. Chunks of a tile that cross the tensor's edge in M, N or K are
//   loaded element by element with zeros past the edge (not with cp.async's zero-fill form, whose
//   16-byte source address compute-sanitizer reports past a small operand), so a partial tile
//   multiplies zeros and no load leaves the tensor. Shared rows are padded by 16 bytes, so
//   ldmatrix's 8 row reads hit 8 distinct bank groups (conflict-free) without a swizzle.
// - CUDA cores (f32, or any layout the tensor-core path cannot load): a 64 x 64 tile, K in
//   steps of 16 through shared memory, 4 x 4 outputs per thread; every load through the plan's
//   strides, bounds-checked. A batch of one with few tiles splits K as the wgmma kernel does.
// - wgmma + TMA (f16/bf16 on compute capability 9.0, sm90/matmul_wgmma.cu), the default there:
//   on the H200 it ran 4096^3 at 0.82-0.88x cuBLAS and 8192^3 at 0.94-0.95x (62-68% of the dense
//   peak) where the mma.sync kernel reached 0.31-0.42x (data/bench/matmul/h200-wgmma.json).
//   OPRT_MATMUL_STRATEGY, read when a descriptor is created (kept in backend_variant):
//     auto  (default) wgmma where the GPU and the operands allow it, the two kernels above elsewhere
//     mma   the two kernels above only (the sm_80 path; a benchmark's baseline)
//     wgmma the same as auto
//     wgmma-pipe  as wgmma, one k-tile's wgmma kept in flight (an experiment, row-major pairs)
//     plain as auto, without the three below (a benchmark's baseline for them)
// - In every mode but mma and plain, on any GPU: an output of at most 8 rows or 8 columns (decode, a matrix times
//   a few vectors; for 16-bit at most 4, and at most 8192 the other way: matmul_workspace_plan.h)
//   takes the skinny kernel (matmul_skinny.cuh), which streams B once on CUDA cores.
// - In auto and wgmma: 16-bit operands the tensor-core kernels cannot read as they are (K or N
//   not a multiple of 8) are copied into the workspace first (matmul_pack.cuh), and on sm_90 a
//   batch of one whose few output tiles are mostly empty splits K across blocks (f32 partials in
//   the workspace, then summed in a fixed order). On an H100 (2026-12-07, against cuBLAS in the
//   same run): 5810 x 12368 x 1995 f16 0.10x -> 3.25x (cuBLAS is slow there too), 10262 x 13690 x
//   1734 bf16 0.06x -> 1.66x, 16 x 50257 x 4096 bf16 0.17x -> 0.48x, 1 x 83 x 13113 f16 0.01x ->
//   0.33x, 8 x 4096 x 4096 bf16 0.29x -> 0.79x; the suite, memcheck and initcheck clean under it.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "cuda_launch.cuh"
#include "matmul_descriptor.h"
#include "matmul_pack.cuh"
#include "matmul_skinny.cuh"
#include "matmul_wgmma.h"
#include "tensor_core.cuh"

using namespace oprt;

namespace {
enum Mode : int { kAuto = 0, kMma = 1, kWgmma = 2, kWgmmaPipe = 3, kPlain = 4 };
constexpr int TM = 64, TN = 64, TK = 16, SIMPLE_THREADS = 256;  // the CUDA-core kernel's tiles

int mode_from_env() {
  const char* v = env_or("OPRT_MATMUL_STRATEGY", "auto");
  for (const auto [name, mode] : {std::pair{"auto", kAuto}, std::pair{"mma", kMma}, std::pair{"wgmma", kWgmma},
                                  std::pair{"wgmma-pipe", kWgmmaPipe}, std::pair{"plain", kPlain}})
    if (std::strcmp(v, name) == 0) return mode;
  fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_MATMUL_STRATEGY=", v, " is not one of auto, mma, wgmma, wgmma-pipe, plain");
}

bool has_tensor_cores() {  // sm_80 or newer: mma.sync m16n8k16, ldmatrix, cp.async
  return compute_capability_major() >= 8;
}

// The workspace this descriptor's calls use (matmul_workspace_plan.h): none in the plain and mma modes.
matmul_pack::Workspace matmul_layout(const MatmulDescriptor& d) {
  if (d.backend_variant == kPlain || d.backend_variant == kMma) return {};
  const matmul_pack::Skinny skinny = matmul_pack::skinny(d.plan, d.dtype, sm_count());
  if (skinny.on) return matmul_pack::workspace_for(skinny, d.plan);
  // f32 always takes the CUDA-core kernel, which splits K by the same rules over its 64 x 64 tiles
  // (45 x 1493 x 9249 f32 was 24 blocks walking K on an H100: 0.06x cuBLAS)
  int splits = d.dtype == OPRT_DTYPE_F32 ? static_cast<int>(matmul_pack::split_k(d.plan, sm_count(), TM, TN, TK)) : 1;
#ifdef OPRT_HAVE_WGMMA
  if (d.dtype != OPRT_DTYPE_F32) splits = matmul_wgmma_splits(d.plan, d.dtype);
#endif
  return matmul_pack::workspace_for(matmul_pack::plan(d.plan, d.dtype, has_tensor_cores()), splits, d.plan);
}
}  // namespace

namespace oprt {
// The workspace: copies of operands the tensor-core kernels cannot read as they are
// (matmul_pack.cuh), then the split-K partials.
size_t matmul_workspace_bytes(MatmulDescriptor& d) {
  d.backend_variant = mode_from_env();
  return static_cast<size_t>(matmul_layout(d).workspace_bytes());
}
}  // namespace oprt

namespace {

// ---------------------------------------------------------------- tensor-core kernel
constexpr int BK = 32, STAGES = 3, THREADS = 256;  // 8 warps, 2 (M) x 4 (N)

// Block tiles. Square: 128 x 128, warp tiles 64 x 32 (64 accumulators per thread, 2 blocks per
// SM). Wide, for outputs large enough to fill the GPU with fewer blocks: 128 x 256, warp tiles
// 64 x 64, twice the mma per ldmatrix of B and per byte loaded, 128 accumulators per thread (one
// block per SM).
template <int BM_, int BN_, int MIN_BLOCKS_>
struct Config {
  static constexpr int BM = BM_, BN = BN_, MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int WARP_M = BM / 2, WARP_N = BN / 4;
  static constexpr int MT = WARP_M / 16, NT = WARP_N / 8;  // mma tiles per warp
};
using Square = Config<128, 128, 2>;
using Wide = Config<128, 256, 1>;
constexpr int PAD = 8;                       // elements added to each shared row (16 bytes)
constexpr int GROUP_M = 8;                   // block order: 8 row tiles share B's columns in L2

// One operand's tile for one stage, [OUTER][INNER + PAD] with INNER the operand's contiguous
// dim: K when K_INNER, else its M (for A) or N (for B).
template <bool K_INNER, int MN>
struct Tile {
  static constexpr int outer = K_INNER ? MN : BK;
  static constexpr int inner = K_INNER ? BK : MN;
  static constexpr int stride = inner + PAD;
  static constexpr int elems = outer * stride;
};

template <class C, bool A_K, bool B_K>
constexpr int mma_smem_bytes() {
  return STAGES * (Tile<A_K, C::BM>::elems + Tile<B_K, C::BN>::elems) * 2;
}

// 16 bytes global -> shared, of which the first src_bytes are read and the rest zero-filled.
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// The cp.async work of one operand: each thread copies CHUNKS 16-byte chunks of every stage's
// tile. Which chunks, and how much of each lies inside the tensor along M or N, is fixed for the
// block; only the K coordinate moves (by BK per tile), so that part is all a load computes.
template <class T, bool K_INNER, int MN>
struct TileLoader {
  using S = Tile<K_INNER, MN>;
  static constexpr int per_row = S::inner / 8;  // 16-byte chunks per shared row
  static constexpr int chunks = S::outer * per_row / THREADS;
  static_assert(S::outer * per_row % THREADS == 0, "whole chunks per thread");
  const T* src[chunks];     // each chunk's first element at K = 0
  int mn_valid[chunks];     // elements of the chunk inside the tensor along M / N: 0..8
  int64_t k_step;           // elements between a chunk's sources in consecutive K tiles

  // Chunk c of this thread: shared row o (outer dim), column i (inner dim, a multiple of 8).
  __device__ __forceinline__ static int row(int c) { return (threadIdx.x + c * THREADS) / per_row; }
  __device__ __forceinline__ static int col(int c) { return (threadIdx.x + c * THREADS) % per_row * 8; }

  __device__ __forceinline__ TileLoader(const T* g, int64_t ld, int64_t mn0, int64_t mn_size) {
    k_step = K_INNER ? BK : BK * ld;
#pragma unroll
    for (int c = 0; c < chunks; ++c) {
      if (K_INNER) {  // rows are M (N), columns K
        const int64_t mn = mn0 + row(c);
        mn_valid[c] = mn < mn_size ? 8 : 0;
        src[c] = mn < mn_size ? g + mn * ld + col(c) : g;
      } else {  // rows are K, columns M (N)
        const int64_t mn = mn0 + col(c);
        mn_valid[c] = mn < mn_size ? static_cast<int>(mn_size - mn < 8 ? mn_size - mn : 8) : 0;
        src[c] = mn_valid[c] ? g + row(c) * ld + mn : g;
      }
    }
  }

  // Issues the copies of K tile kt into `tile`; elements past the tensor's edge read as 0.
  __device__ __forceinline__ void load(T* tile, int64_t kt, int64_t k_size) const {
#pragma unroll
    for (int c = 0; c < chunks; ++c) {
      const int64_t k = kt * BK + (K_INNER ? col(c) : row(c));  // the chunk's (first) K coordinate
      int valid = 0;
      if (k < k_size) valid = K_INNER ? (k_size - k < mn_valid[c] ? static_cast<int>(k_size - k) : mn_valid[c])
                                      : mn_valid[c];
      T* dst = tile + row(c) * S::stride + col(c);
      if (valid == 8) {
        cp_async_16(dst, src[c] + kt * k_step, 16);
      } else {
        // An edge chunk: only `valid` elements lie inside the tensor. cp.async's zero-fill form
        // (src-size < 16) would be correct on the hardware, but it names a 16-byte source that
        // may run past the allocation, and compute-sanitizer reports it as such: copy the valid
        // elements with plain loads instead (edges are a sliver of the work).
        const T* from = src[c] + kt * k_step;
#pragma unroll
        for (int e = 0; e < 8; ++e) dst[e] = e < valid ? from[e] : T(0.0f);
      }
    }
  }
};


template <class T, class C, bool A_K, bool B_K>
__global__ void __launch_bounds__(THREADS, C::MIN_BLOCKS)
    matmul_mma_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, MatmulPlan p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int BM = C::BM, BN = C::BN, WARP_M = C::WARP_M, WARP_N = C::WARP_N, MT = C::MT, NT = C::NT;
  using SA = Tile<A_K, BM>;
  using SB = Tile<B_K, BN>;
  extern __shared__ __align__(16) unsigned char smem[];
  T* sa = reinterpret_cast<T*>(smem);
  T* sb = sa + STAGES * SA::elems;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / (BN / WARP_N) * WARP_M, wn = warp % (BN / WARP_N) * WARP_N;
  const int q = lane / 8, r = lane % 8;  // ldmatrix: which 8x8 matrix this lane addresses, and its row
  const int g = lane / 4, t = lane % 4;  // mma fragments: row group and thread in group

  // Grouped order: consecutive blocks walk GROUP_M row tiles before moving to the next columns.
  const int64_t m_tiles = (p.m + BM - 1) / BM, n_tiles = (p.n + BN - 1) / BN;
  const int64_t pid = blockIdx.x, span = GROUP_M * n_tiles;
  const int64_t first_m = pid / span * GROUP_M;
  const int64_t group_m = m_tiles - first_m < GROUP_M ? m_tiles - first_m : GROUP_M;
  const int64_t m0 = (first_m + pid % span % group_m) * BM, n0 = pid % span / group_m * BN;
  const int64_t k_tiles = (p.k + BK - 1) / BK;
  const int64_t lda = A_K ? p.a_m : p.a_k, ldb = B_K ? p.b_n : p.b_k;

  for (int64_t z = blockIdx.y; z < p.batch; z += gridDim.y) {
    const T* ga = a + z * p.a_batch;
    const T* gb = b + z * p.b_batch;
    const TileLoader<T, A_K, BM> load_a(ga, lda, m0, p.m);
    const TileLoader<T, B_K, BN> load_b(gb, ldb, n0, p.n);
    auto load_stage = [&](int stage, int64_t kt) {
      load_a.load(sa + stage * SA::elems, kt, p.k);
      load_b.load(sb + stage * SB::elems, kt, p.k);
    };
    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    // Prologue: STAGES - 1 tiles in flight. Every thread commits one group per step, empty or
    // not, so wait_group counts the same groups in every thread.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < k_tiles) load_stage(s, s);
      cp_async_commit();
    }
    int compute_stage = 0, load_stage_index = STAGES - 1;
    for (int64_t kt = 0; kt < k_tiles; ++kt) {
      cp_async_wait<STAGES - 2>();  // tile kt has landed (for this thread) ...
      __syncthreads();              // ... for every thread; and stage kt-1 is no longer read
      if (kt + STAGES - 1 < k_tiles) load_stage(load_stage_index, kt + STAGES - 1);
      cp_async_commit();
      const T* ta = sa + compute_stage * SA::elems;
      const T* tb = sb + compute_stage * SB::elems;
#pragma unroll
      for (int ks = 0; ks < BK; ks += 16) {
        // B's fragments for the whole warp tile, then A's one 16-row tile at a time: fewer
        // fragment registers live at once (128 registers per thread keep 2 blocks per SM).
        uint32_t bf[NT][2];
#pragma unroll
        for (int j = 0; j < NT; j += 2) {  // one x4 load covers two 8-column mma tiles
          const int n = wn + j * 8;
          uint32_t x[4];
          if (B_K)  // [n][k]
            ldmatrix_x4(x, tb + (n + (q >> 1) * 8 + r) * SB::stride + ks + (q & 1) * 8);
          else  // [k][n], transposed on load
            ldmatrix_x4_trans(x, tb + (ks + (q & 1) * 8 + r) * SB::stride + n + (q >> 1) * 8);
          bf[j][0] = x[0], bf[j][1] = x[1], bf[j + 1][0] = x[2], bf[j + 1][1] = x[3];
        }
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          const int m = wm + i * 16;
          uint32_t af[4];
          if (A_K)  // [m][k]: matrices (rows +0/+8) x (k +0/+8)
            ldmatrix_x4(af, ta + (m + (q & 1) * 8 + r) * SA::stride + ks + (q >> 1) * 8);
          else  // [k][m], transposed on load
            ldmatrix_x4_trans(af, ta + (ks + (q >> 1) * 8 + r) * SA::stride + m + (q & 1) * 8);
#pragma unroll
          for (int j = 0; j < NT; ++j) mma_16816<T>(acc[i][j], af, bf[j][0], bf[j][1]);
        }
      }
      compute_stage = compute_stage == STAGES - 1 ? 0 : compute_stage + 1;
      load_stage_index = load_stage_index == STAGES - 1 ? 0 : load_stage_index + 1;
    }
    cp_async_wait<0>();
    __syncthreads();  // the next batch's prologue overwrites the stages

    // Accumulator (i, j): rows g and g + 8, columns 2t and 2t + 1 of its 16 x 8 tile.
    T* go = out + z * p.o_batch;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int64_t row = m0 + wm + i * 16 + g + h * 8, col = n0 + wn + j * 8 + 2 * t;
          if (row >= p.m || col >= p.n) continue;
          T* dst = go + row * p.o_m + col * p.o_n;
          const float x = acc[i][j][2 * h], y = acc[i][j][2 * h + 1];
          if (p.o_n == 1 && col + 1 < p.n && (reinterpret_cast<uintptr_t>(dst) & 3) == 0) {
            *reinterpret_cast<uint32_t*>(dst) = pack_pair<T>(x, y);  // two adjacent columns, one 4-byte store
          } else {
            dst[0] = from_float<T>(x);
            if (col + 1 < p.n) dst[p.o_n] = from_float<T>(y);
          }
        }
  }
#else
  __trap();  // never launched: the host checks the device for sm_80 first
#endif
}

// ---------------------------------------------------------------- CUDA-core kernel

// partials (split K, a batch of one): block y sums K from y * k_per_split (a multiple of TK) for
// k_per_split and writes its f32 sums to partials[y] (M x N), added by matmul_sum_splits.cuh.
template <class T>
__global__ void __launch_bounds__(SIMPLE_THREADS)
    matmul_tiled_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, MatmulPlan p,
                        float* __restrict__ partials, int64_t k_per_split) {
  __shared__ float as[TK][TM + 1];  // as[k][m]
  __shared__ float bs[TK][TN + 1];  // bs[k][n]
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;  // outputs (ty + 16 i, tx + 16 j)
  const int64_t n_tiles = (p.n + TN - 1) / TN;
  const int64_t m0 = blockIdx.x / n_tiles * TM, n0 = blockIdx.x % n_tiles * TN;
  // Walk each operand's contiguous dim with consecutive threads (coalesced loads).
  const bool a_k_fast = p.a_k == 1, b_n_fast = p.b_n == 1;
  const bool split = partials != nullptr;  // then grid y counts pieces of K, not batches
  const int64_t k_begin = split ? blockIdx.y * k_per_split : 0;
  const int64_t k_end = split && k_begin + k_per_split < p.k ? k_begin + k_per_split : p.k;
  for (int64_t z = split ? 0 : blockIdx.y; z < p.batch; z += split ? p.batch : gridDim.y) {
    const T* ga = a + z * p.a_batch;
    const T* gb = b + z * p.b_batch;
    float acc[4][4] = {};
    for (int64_t k0 = k_begin; k0 < k_end; k0 += TK) {
      for (int e = threadIdx.x; e < TM * TK; e += SIMPLE_THREADS) {
        const int kk = a_k_fast ? e % TK : e / TM, mm = a_k_fast ? e / TK : e % TM;
        const int64_t gm = m0 + mm, gk = k0 + kk;
        as[kk][mm] = gm < p.m && gk < k_end ? to_float(ga[gm * p.a_m + gk * p.a_k]) : 0.f;
      }
      for (int e = threadIdx.x; e < TN * TK; e += SIMPLE_THREADS) {
        const int kk = b_n_fast ? e / TN : e % TK, nn = b_n_fast ? e % TN : e / TK;
        const int64_t gk = k0 + kk, gn = n0 + nn;
        bs[kk][nn] = gk < k_end && gn < p.n ? to_float(gb[gk * p.b_k + gn * p.b_n]) : 0.f;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < TK; ++kk) {
        float x[4], y[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) x[i] = as[kk][ty + 16 * i];
#pragma unroll
        for (int j = 0; j < 4; ++j) y[j] = bs[kk][tx + 16 * j];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] += x[i] * y[j];
      }
      __syncthreads();
    }
    T* go = out + z * p.o_batch;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int64_t row = m0 + ty + 16 * i, col = n0 + tx + 16 * j;
        if (row >= p.m || col >= p.n) continue;
        if (split) partials[(blockIdx.y * p.m + row) * p.n + col] = acc[i][j];
        else go[row * p.o_m + col * p.o_n] = from_float<T>(acc[i][j]);
      }
  }
}

// ---------------------------------------------------------------- host side
constexpr int64_t kMaxGridY = 65535;

// Whether an operand's rows can be copied 16 bytes at a time: a unit stride on one of its two
// dims (inner), the other (ld) and the batch stride multiples of 8 elements, a 16-byte aligned
// pointer. `outer` is the size of the dim ld steps over (its stride is irrelevant when <= 1).
bool rows_of_16_bytes(int64_t inner_stride, int64_t ld, int64_t outer, int64_t batch_stride, const void* ptr) {
  return matmul_pack::rows_ok(inner_stride, ld, outer, batch_stride) && reinterpret_cast<uintptr_t>(ptr) % 16 == 0;
}

template <class T, class C, bool A_K, bool B_K>
void launch_mma(const MatmulPlan& p, const T* a, const T* b, T* out, cudaStream_t stream) {
  auto* kernel = matmul_mma_kernel<T, C, A_K, B_K>;
  constexpr int smem = mma_smem_bytes<C, A_K, B_K>();
  // Over 48 KiB of dynamic shared memory must be asked for, once per device.
  static std::atomic<uint64_t> opted_in{0};
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  const uint64_t bit = uint64_t{1} << (device % 64);
  if (!(opted_in.load(std::memory_order_relaxed) & bit)) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "cudaFuncSetAttribute (matmul shared memory)");
    opted_in.fetch_or(bit, std::memory_order_relaxed);
  }
  const int64_t tiles = ((p.m + C::BM - 1) / C::BM) * ((p.n + C::BN - 1) / C::BN);
  if (tiles > INT32_MAX) fail(OPRT_STATUS_NOT_SUPPORTED, "matmul: ", tiles, " output tiles exceed one grid");
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(std::min(p.batch, kMaxGridY)));
  kernel<<<grid, THREADS, smem, stream>>>(a, b, out, p);
  check_launch("matmul kernel (tensor cores)");
}

// splits > 1 (the workspace's split of K, f32's or the wgmma kernel's): K split that many ways, the
// partial sums in `partials`.
template <class T>
void launch_tiled(const MatmulPlan& p, const T* a, const T* b, T* out, cudaStream_t stream, int splits = 1,
                  float* partials = nullptr) {
  const int64_t tiles = ((p.m + TM - 1) / TM) * ((p.n + TN - 1) / TN);
  if (tiles > INT32_MAX) fail(OPRT_STATUS_NOT_SUPPORTED, "matmul: ", tiles, " output tiles exceed one grid");
  const bool split = splits > 1 && partials != nullptr;
  const int64_t per_split = split ? matmul_pack::k_tiles_per_split((p.k + TK - 1) / TK, splits) * TK : 0;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(split ? splits : std::min(p.batch, kMaxGridY)));
  matmul_tiled_kernel<T><<<grid, SIMPLE_THREADS, 0, stream>>>(a, b, out, p, split ? partials : nullptr, per_split);
  check_launch("matmul kernel (CUDA cores)");
  if (split) matmul_sum_splits::launch(partials, splits, out, p, stream);
}

// 128 x 256 tiles for outputs of 1024 x 1024 and more: from there the square tiles' extra loads
// cost more than the wide tiles leave SMs idle (a 1024 x 1024 output is 32 wide tiles). A guess to
// be measured: tests/run_ops.py --op matmul --mode bench.
bool wide_tiles(const MatmulPlan& p) { return p.m >= 1024 && p.n >= 1024; }

// The instantiation for the operands' layouts: A row-major (K contiguous) or not, B row-major
// (N contiguous) or not; row-major preferred where a dim of size 1 makes both true.
template <class T, class C>
void launch_layout(const MatmulPlan& p, const T* a, const T* b, T* out, cudaStream_t stream, bool a_k, bool b_n) {
  if (a_k && b_n) return launch_mma<T, C, true, false>(p, a, b, out, stream);
  if (a_k) return launch_mma<T, C, true, true>(p, a, b, out, stream);
  if (b_n) return launch_mma<T, C, false, false>(p, a, b, out, stream);
  return launch_mma<T, C, false, true>(p, a, b, out, stream);
}

// splits and partials: the workspace's split of K, which the CUDA-core kernel takes (the mma.sync one does not).
template <class T>
void run(const MatmulPlan& p, const T* a, const T* b, T* out, cudaStream_t stream, int splits, float* partials) {
  if constexpr (!std::is_same_v<T, float>) {
    const int64_t ab = p.batch > 1 ? p.a_batch : 0, bb = p.batch > 1 ? p.b_batch : 0;
    const bool a_k = rows_of_16_bytes(p.a_k, p.a_m, p.m, ab, a);  // A row-major: K contiguous
    const bool a_m = rows_of_16_bytes(p.a_m, p.a_k, p.k, ab, a);  // A column-major: M contiguous
    const bool b_k = rows_of_16_bytes(p.b_k, p.b_n, p.n, bb, b);  // B column-major: K contiguous
    const bool b_n = rows_of_16_bytes(p.b_n, p.b_k, p.k, bb, b);  // B row-major: N contiguous
    if ((a_k || a_m) && (b_k || b_n) && has_tensor_cores()) {
      if (wide_tiles(p)) return launch_layout<T, Wide>(p, a, b, out, stream, a_k, b_n);
      return launch_layout<T, Square>(p, a, b, out, stream, a_k, b_n);
    }
  }
  launch_tiled(p, a, b, out, stream, splits, partials);
}
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_matmul(const oprt_matmul_descriptor* desc, void* workspace,
                                                    size_t workspace_size, void* out, const void* a, const void* b,
                                                    oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<MatmulDescriptor>(desc, workspace, workspace_size);
    const MatmulPlan& p = d.plan;
    if (p.empty()) return;
    const bool reads = p.k > 0;  // with K = 0, a and b are empty and may have no storage
    require_buffers({{out, "out", true}, {a, "a", reads}, {b, "b", reads}});
    // The same layout create() sized the workspace for (none if that workspace is smaller: a
    // descriptor made on another GPU than the one it runs on)
    matmul_pack::Workspace w = matmul_layout(d);
    if (static_cast<int64_t>(d.workspace_bytes) < w.workspace_bytes()) w = {};
    float* partials = w.splits > 1 ? reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + w.partials_offset())
                                   : nullptr;
    const cudaStream_t s = as_cuda_stream(stream);
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      const T *ta = static_cast<const T*>(a), *tb = static_cast<const T*>(b);
      if (w.skinny.on) return matmul_skinny::run(w.skinny, p, ta, tb, static_cast<T*>(out), partials, s);
      const MatmulPlan q = matmul_pack::apply(w.packing, p, ta, tb, workspace, s);
#ifdef OPRT_HAVE_WGMMA
      const bool wgmma = d.backend_variant != kMma;
      if (wgmma && matmul_wgmma(q, d.dtype, ta, tb, out, s, d.backend_variant == kWgmmaPipe, w.splits, partials)) return;
#endif
      run(q, ta, tb, static_cast<T*>(out), s, w.splits, partials);
    });
  });
}
