// matmul on Hopper (sm_90a): wgmma.mma_async fed by TMA, compiled only for sm_90a (CMakeLists.txt
// builds this file alone with CUDA_ARCHITECTURES 90a; the host falls back to the mma.sync kernel
// in ../matmul_cuda.cu on every other GPU).
//
// A block owns a 128 x 256 tile of out and walks K in steps of 64 through a STAGES-deep ring of
// shared-memory stages. Three warpgroups (384 threads):
// - warpgroup 0, the producer: one thread issues the TMA copies of each stage's A and B tiles
//   (cp.async.bulk.tensor, 128-byte swizzle) once the consumers have freed the stage (the
//   stage's `empty` mbarrier), and tells the TMA unit to signal the stage's `full` mbarrier
//   when all the stage's bytes have landed (expect_tx). TMA reads elements outside the tensor
//   as zero, so tails in M, N and K need no code: a partial tile multiplies zeros.
// - warpgroups 1 and 2, the consumers: each owns 64 rows of the tile, waits on `full`, issues
//   four wgmma m64n256k16 (K = 16 each) reading A and B straight from shared memory through
//   matrix descriptors, waits for them, frees the stage, and at the end stores its 64 x 256 f32
//   accumulators (128 registers per thread), rounded to T, guarded against the edges.
//
// Shared-memory layouts (PTX ISA, "Shared Memory Matrix Layout" and "Matrix Descriptor Format";
// CUTLASS cute/arch/mma_sm90_desc.hpp). A 128-byte swizzle atom is 8 rows of 128 bytes
// (64 f16), 1024 bytes, 1024-aligned; a TMA box whose inner dim is 64 elements lands as such
// atoms stacked along its outer dim.
// - K-major operand (K contiguous in memory: A row-major, B column-major): one box of
//   [rows = M or N][64 K]. Descriptor: SBO = 1024 (8 rows to the next 8), LBO unused (1), and
//   the k-th 16-wide K slice starts 32 bytes further (the swizzle is applied to the address
//   bits, so moving the start inside the atom is how CUTLASS / DeepGEMM step K too).
// - MN-major operand (M or N contiguous: B row-major, A column-major): boxes of [64 K][64 MN]
//   side by side, 8 KiB each. Canonical layout ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)): LBO = 8192
//   (the next 64 M/N elements: the next box), SBO = 1024 (the next 8 K rows); the k-th 16-wide
//   K slice starts 16 rows = 2048 bytes further; imm-trans = 1 for that operand.
#include <cuda.h>          // CUtensorMap (types only: nothing from libcuda is linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda_launch.cuh"
#include "matmul_sum_splits.cuh"
#include "matmul_wgmma.h"
#include "matmul_workspace_plan.h"
#include "tensor_core.cuh"  // pack_pair
#include "tma.cuh"
#include "wgmma.cuh"

using namespace oprt;

namespace {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, CONSUMERS = 2;
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int BOX_BYTES = 64 * 64 * 2;  // one MN-major box: [64 K][64 M or N]
// Stages, 1024 bytes of slack to align them to the swizzle atom, then the mbarriers.
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;
constexpr int GROUP_M = 8;  // block order: 8 row tiles share B's columns in L2

// ---------------------------------------------------------------- wgmma
// d (64 x 256, f32) += A (64 x 16, from desc_a) * B (16 x 256, from desc_b). TRANS_x = 1: that
// operand is MN-major in shared memory.
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void wgmma_f16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, %131, %132;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TRANS_A), "n"(TRANS_B));
}

template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void wgmma_bf16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, %131, %132;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TRANS_A), "n"(TRANS_B));
}

template <class T, int TRANS_A, int TRANS_B>
__device__ __forceinline__ void wgmma_256(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  if constexpr (std::is_same_v<T, __half>)
    wgmma_f16<TRANS_A, TRANS_B>(d, desc_a, desc_b);
  else
    wgmma_bf16<TRANS_A, TRANS_B>(d, desc_a, desc_b);
}


// A_K: A is K-major (row-major (M, K)); B_K: B is K-major (column-major (K, N), i.e. b.T
// contiguous). The tensor maps are 3-d: (contiguous dim, other dim, batch); an operand that
// repeats over the batch has a batch of 1 there (batched = 0) and is always read at z = 0.
// PIPE (OPRT_MATMUL_STRATEGY=wgmma-pipe, an experiment): a consumer keeps one k-tile's wgmma
// group in flight while it issues the next (wait_group 1, as CUTLASS's sm90 mainloop does)
// and frees a stage one k-tile later; otherwise it waits for each group (wait_group 0).
// Split K (partials != nullptr, batch 1): block row y multiplies k-tiles [y * per_split, (y + 1) *
// per_split) only and writes its f32 sums to partials[y] (M x N, row-major); sum_splits adds them.
template <class T, bool A_K, bool B_K, bool PIPE>
__global__ void __launch_bounds__(THREADS, 1)
    matmul_wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                        T* __restrict__ out, MatmulPlan p, int a_batched, int b_batched, float* __restrict__ partials,
                        int per_split) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t bars = base + STAGES * STAGE_BYTES;
  auto full = [&](int s) { return bars + 8 * s; };
  auto empty = [&](int s) { return bars + 8 * (STAGES + s); };
  auto stage_a = [&](int s) { return base + s * STAGE_BYTES; };
  auto stage_b = [&](int s) { return base + s * STAGE_BYTES + A_BYTES; };

  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);                 // the producer's expect_tx; TMA completes the bytes
      mbar_init(empty(s), CONSUMERS * 4);    // one arrival per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
  }
  __syncthreads();

  // Grouped order: consecutive blocks walk GROUP_M row tiles before moving to the next columns.
  const int64_t m_tiles = (p.m + BM - 1) / BM, n_tiles = (p.n + BN - 1) / BN;
  const int64_t pid = blockIdx.x, span = GROUP_M * n_tiles;
  const int64_t first_m = pid / span * GROUP_M;
  const int64_t group_m = m_tiles - first_m < GROUP_M ? m_tiles - first_m : GROUP_M;
  const int m0 = static_cast<int>((first_m + pid % span % group_m) * BM);
  const int n0 = static_cast<int>(pid % span / group_m * BN);
  const int k_tiles = static_cast<int>((p.k + BK - 1) / BK);
  const bool split = partials != nullptr;  // then gridDim.y counts splits of K, not batches
  const int kt_begin = split ? static_cast<int>(blockIdx.y) * per_split : 0;
  const int kt_end = split ? min(k_tiles, kt_begin + per_split) : k_tiles;
  const int64_t z_first = split ? 0 : blockIdx.y, z_step = split ? 1 : gridDim.y;

  // Registers: the compiler gets 168 per thread (384 threads); the producer gives most of its
  // back and the consumers take them (40 + 2 x 232 per lane of a warpgroup, 64512 of the SM's
  // 65536), which ptxas honours: the 128 accumulators then fit without spilling (at 168 they
  // spilled 412 bytes).
  if (wg == 0) {  // producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      int it = 0;  // stages filled so far, over every batch this block runs
      for (int64_t z = z_first; z < p.batch; z += z_step) {
        const int za = a_batched ? static_cast<int>(z) : 0, zb = b_batched ? static_cast<int>(z) : 0;
        for (int kt = kt_begin; kt < kt_end; ++kt, ++it) {
          const int s = it % STAGES, round = it / STAGES;
          if (round > 0) mbar_wait(empty(s), (round - 1) & 1);  // the consumers freed it
          mbar_expect_tx(full(s), STAGE_BYTES);
          const int k0 = kt * BK;
          if (A_K) {
            tma_load(stage_a(s), &map_a, k0, m0, za, full(s));
          } else {
#pragma unroll
            for (int i = 0; i < BM / 64; ++i) tma_load(stage_a(s) + i * BOX_BYTES, &map_a, m0 + 64 * i, k0, za, full(s));
          }
          if (B_K) {
            tma_load(stage_b(s), &map_b, k0, n0, zb, full(s));
          } else {
#pragma unroll
            for (int i = 0; i < BN / 64; ++i) tma_load(stage_b(s) + i * BOX_BYTES, &map_b, n0 + 64 * i, k0, zb, full(s));
          }
        }
      }
    }
    return;
  }

  // consumers
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int c = wg - 1, warp = tid / 32, lane = tid % 32;
  int it = 0, held = -1;  // held (PIPE): the stage whose wgmma group may still be in flight
  for (int64_t z = z_first; z < p.batch; z += z_step) {
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.f;
    for (int kt = kt_begin; kt < kt_end; ++kt, ++it) {
      const int s = it % STAGES;
      mbar_wait(full(s), (it / STAGES) & 1);
      // This warpgroup's 64 rows of A: rows 64c.. of the K-major box, or the c-th MN-major box
      // (both 8 KiB in).
      const uint32_t a_tile = stage_a(s) + c * BOX_BYTES, b_tile = stage_b(s);
      fence_operands(acc);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const uint64_t da = A_K ? smem_desc(a_tile + kk * 32, 16, 1024) : smem_desc(a_tile + kk * 2048, BOX_BYTES, 1024);
        const uint64_t db = B_K ? smem_desc(b_tile + kk * 32, 16, 1024) : smem_desc(b_tile + kk * 2048, BOX_BYTES, 1024);
        wgmma_256<T, A_K ? 0 : 1, B_K ? 0 : 1>(acc, da, db);
      }
      wgmma_commit();
      if (PIPE) {
        wgmma_wait<1>();  // the previous k-tile's group is done: its stage can go
        fence_operands(acc);
        __syncwarp();
        if (held >= 0 && lane == 0) mbar_arrive(empty(held));
        held = s;
      } else {
        wgmma_wait<0>();
        fence_operands(acc);
        __syncwarp();
        if (lane == 0) mbar_arrive(empty(s));  // this warp is done reading the stage
      }
    }
    if (PIPE && held >= 0) {  // the last group, before the accumulators are read
      wgmma_wait<0>();
      fence_operands(acc);
      __syncwarp();
      if (lane == 0) mbar_arrive(empty(held));
      held = -1;
    }

    // Accumulator layout (PTX ISA, wgmma .m64nNk16 D fragments): warp w of the warpgroup holds
    // rows 16w + lane/4 (+8); register 4j + 2h + e is column 8j + 2(lane%4) + e of row +8h.
    T* go = out + z * p.o_batch;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t row = m0 + c * 64 + warp * 16 + lane / 4 + 8 * h, col = n0 + 8 * j + 2 * (lane % 4);
        if (row >= p.m || col >= p.n) continue;
        if (split) {
          float* part = partials + (static_cast<int64_t>(blockIdx.y) * p.m + row) * p.n + col;
          part[0] = acc[4 * j + 2 * h];
          if (col + 1 < p.n) part[1] = acc[4 * j + 2 * h + 1];
          continue;
        }
        T* dst = go + row * p.o_m + col * p.o_n;
        const float x = acc[4 * j + 2 * h], y = acc[4 * j + 2 * h + 1];
        if (p.o_n == 1 && col + 1 < p.n && (reinterpret_cast<uintptr_t>(dst) & 3) == 0) {
          *reinterpret_cast<uint32_t*>(dst) = pack_pair<T>(x, y);  // two adjacent columns, one 4-byte store
        } else {
          dst[0] = from_float<T>(x);
          if (col + 1 < p.n) dst[p.o_n] = from_float<T>(y);
        }
      }
  }
#else
  __trap();  // never launched: built for sm_90a only, and the host checks for compute capability 9.0
#endif
}

// ---------------------------------------------------------------- host side
// A 3-d map over (inner: contiguous, outer: stride ld, batch: stride bs), in elements, with a
// box of box_inner (64: one 128-byte swizzle row) x box_outer x 1.
CUtensorMap make_map(CUtensorMapDataType type, const void* ptr, int64_t inner, int64_t outer, int64_t batch,
                     int64_t ld, int64_t bs, uint32_t box_outer) {
  // Strides of dims of size 1 are never stepped; give them a legal value (a multiple of 16
  // bytes, covering the dims inside).
  if (outer <= 1) ld = (inner + 7) / 8 * 8;
  if (batch <= 1) bs = ld * outer;
  CUtensorMap map;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(outer),
                              static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld * 2), static_cast<cuuint64_t>(bs * 2)};
  const cuuint32_t box[3] = {64, box_outer, 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = encode_tiled()(&map, type, 3, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) fail(OPRT_STATUS_INTERNAL, "matmul (wgmma): cuTensorMapEncodeTiled failed with ", static_cast<int>(r));
  return map;
}

// TMA's needs of one operand (inner x outer, batches batch_stride apart, 0: not batched) whose
// dim `inner` has unit stride: the row stride and the batch stride multiples of 16 bytes (8
// elements), a 16-byte aligned pointer, and dims nested as the tensor map describes them (rows
// that do not overlap, batches past the whole matrix); anything else runs the mma.sync kernel.
bool tma_ok(int64_t inner_stride, int64_t inner, int64_t ld, int64_t outer, int64_t batch_stride, const void* ptr) {
  if (inner_stride != 1 || reinterpret_cast<uintptr_t>(ptr) % 16 != 0 || batch_stride % 8 != 0) return false;
  if (outer > 1 && (ld % 8 != 0 || ld < inner)) return false;
  const int64_t matrix = outer > 1 ? ld * outer : inner;
  return batch_stride == 0 || batch_stride >= matrix;
}

template <class T, bool A_K, bool B_K, bool PIPE = false>
void launch(const MatmulPlan& p, const void* a, const void* b, void* out, cudaStream_t stream, int splits,
            float* partials) {
  constexpr CUtensorMapDataType type =
      std::is_same_v<T, __half> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const int a_batched = p.batch > 1 && p.a_batch != 0, b_batched = p.batch > 1 && p.b_batch != 0;
  const int64_t ab = a_batched ? p.batch : 1, bb = b_batched ? p.batch : 1;
  const CUtensorMap map_a = A_K ? make_map(type, a, p.k, p.m, ab, p.a_m, p.a_batch, BM)
                                : make_map(type, a, p.m, p.k, ab, p.a_k, p.a_batch, 64);
  const CUtensorMap map_b = B_K ? make_map(type, b, p.k, p.n, bb, p.b_n, p.b_batch, BN)
                                : make_map(type, b, p.n, p.k, bb, p.b_k, p.b_batch, 64);
  auto* kernel = matmul_wgmma_kernel<T, A_K, B_K, PIPE>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM_BYTES);
  const int64_t tiles = ((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
  const bool split = splits > 1 && partials != nullptr;
  const int per_split = split ? static_cast<int>(matmul_pack::k_tiles_per_split((p.k + BK - 1) / BK, splits)) : 0;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(split ? splits : std::min<int64_t>(p.batch, 65535)));
  kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(map_a, map_b, static_cast<T*>(out), p, a_batched, b_batched,
                                                split ? partials : nullptr, per_split);
  check_launch("matmul kernel (wgmma)");
  if (split) matmul_sum_splits::launch(partials, splits, static_cast<T*>(out), p, stream);
}

template <class T>
bool run(const MatmulPlan& p, const void* a, const void* b, void* out, cudaStream_t stream, bool pipelined, int splits,
         float* partials) {
  const int64_t ab = p.batch > 1 ? p.a_batch : 0, bb = p.batch > 1 ? p.b_batch : 0;
  const bool a_k = tma_ok(p.a_k, p.k, p.a_m, p.m, ab, a), a_m = tma_ok(p.a_m, p.m, p.a_k, p.k, ab, a);
  const bool b_k = tma_ok(p.b_k, p.k, p.b_n, p.n, bb, b), b_n = tma_ok(p.b_n, p.n, p.b_k, p.k, bb, b);
  if (!(a_k || a_m) || !(b_k || b_n)) return false;
  // Row-major preferred where a dim of size 1 makes both layouts true. The PIPE experiment is
  // built for the row-major pair only (the benchmarks' layout).
  if (a_k && b_n && pipelined) launch<T, true, false, true>(p, a, b, out, stream, splits, partials);
  else if (a_k && b_n) launch<T, true, false>(p, a, b, out, stream, splits, partials);
  else if (a_k) launch<T, true, true>(p, a, b, out, stream, splits, partials);
  else if (b_n) launch<T, false, false>(p, a, b, out, stream, splits, partials);
  else launch<T, false, true>(p, a, b, out, stream, splits, partials);
  return true;
}
}  // namespace

namespace oprt {
// Split K (matmul_workspace_plan.h's rules) for 16-bit operands on an sm_90 GPU.
int matmul_wgmma_splits(const MatmulPlan& p, oprt_dtype dtype) {
  if ((dtype != OPRT_DTYPE_F16 && dtype != OPRT_DTYPE_BF16) || !is_sm90()) return 1;
  return static_cast<int>(matmul_pack::split_k(p, sm_count(), BM, BN, BK));
}

bool matmul_wgmma(const MatmulPlan& p, oprt_dtype dtype, const void* a, const void* b, void* out,
                  cudaStream_t stream, bool pipelined, int splits, float* partials) {
  if (dtype != OPRT_DTYPE_F16 && dtype != OPRT_DTYPE_BF16) return false;
  constexpr int64_t kCoord = int64_t{1} << 31;  // TMA coordinates and the tile origins are int32
  if (p.k <= 0 || p.m >= kCoord || p.n >= kCoord || p.k >= kCoord || p.batch >= kCoord) return false;
  const int64_t tiles = ((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
  if (tiles > INT32_MAX || !is_sm90()) return false;
  if (dtype == OPRT_DTYPE_F16) return run<__half>(p, a, b, out, stream, pipelined, splits, partials);
  return run<__nv_bfloat16>(p, a, b, out, stream, pipelined, splits, partials);
}
}  // namespace oprt
