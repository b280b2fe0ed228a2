// Hopper's warpgroup MMA (wgmma.mma_async, sm_90a only): the pieces every wgmma kernel shares.
// A warpgroup (4 consecutive warps, 128 threads) multiplies a 64-row tile of A by B into f32
// accumulators spread over its threads; A and B are read from shared memory through matrix
// descriptors (A may instead come from registers), asynchronously: issue, commit the group,
// then wait for it before reading the accumulators.
//
// Shared-memory layout (PTX ISA, "Shared Memory Matrix Layout"; CUTLASS cute/arch/mma_sm90_desc.hpp):
// every operand here uses the 128-byte swizzle. An atom is 8 rows of 128 bytes (64 16-bit
// elements), 1024-byte aligned, and the 16-byte chunk c of row r lies at chunk c ^ (r % 8):
// `swizzled_128b` gives the offset, which is also where TMA's SWIZZLE_128B puts it.
// - K-major operand (its K elements contiguous): rows stacked 128 bytes apart, SBO = 1024 (8 rows
//   to the next 8); K past 64 continues in the next block of rows; a 16-wide K slice starts 32
//   bytes further into the row.
// - MN-major operand (M or N contiguous): K rows of 64 M/N elements, SBO = 1024 (8 K rows to the
//   next 8), LBO = the bytes to the next 64 M/N elements; a 16-deep K slice starts 2048 bytes
//   further; the instruction's transpose bit set for it.
//
// Fragments (PTX ISA, wgmma .m64nNk16): warp w of the warpgroup holds rows 16w + lane / 4 and
// that + 8. Accumulator register 4j + 2h + e is column 8j + 2 (lane % 4) + e of row + 8h; an
// A fragment from registers is mma.sync's m16n8k16 A: {(row, 2t..), (row + 8, 2t..), (row, 2t + 8..),
// (row + 8, 2t + 8..)}, t = lane % 4, two 16-bit values per register.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace oprt {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Offset of 16-byte chunk `chunk` of row r in a tile of ROWS rows laid out for the 128-byte
// swizzle: chunks 0-7 of every row first (one 128-byte row each), then chunks 8-15, ...
template <int ROWS>
__device__ __forceinline__ int swizzled_128b(int r, int chunk) {
  static_assert(ROWS % 8 == 0, "whole swizzle atoms");
  return chunk / 8 * (ROWS * 128) + r * 128 + ((chunk % 8) ^ (r % 8)) * 16;
}

// Shared-memory matrix descriptor: start >> 4 (bits 0-13), LBO >> 4 (16-29), SBO >> 4 (32-45),
// base offset 0 (every atom is 1024-aligned), swizzle mode 1 = 128 bytes (bits 62-63).
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16 |
         static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32 | uint64_t{1} << 62;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed wgmma groups of this warpgroup are still in flight.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Shared memory written by ordinary stores or cp.async (the generic proxy) becomes visible to
// wgmma and TMA (the async proxy) only after this fence, issued by the writing threads.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// The accumulators are read and written by the asynchronous wgmma: keep the compiler from
// moving their uses across the fence / wait (as CUTLASS's warpgroup_fence_operand does).
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// The same for A fragments in registers (four per 16-deep K slice).
template <int N>
__device__ __forceinline__ void fence_operands(uint32_t (&a)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(a[i][j])::"memory");
}

#define OPRT_WGMMA_REGS_64 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define OPRT_WGMMA_OUTS_64(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

#define OPRT_WGMMA_REGS_128 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define OPRT_WGMMA_OUTS_128(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// d (64 x N) = A (64 x 16) B (16 x N) (+ d when the predicate operand is nonzero); A and B from
// shared memory, both K-major. Operands after the accumulators: A's and B's descriptors, accumulate.
#define OPRT_WGMMA_SS(N, TYPE, A, B, ACC) \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %" ACC ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" \
  OPRT_WGMMA_REGS_##N "}, %" A ", %" B ", p, 1, 1, 0, 0;\n}\n"
// d (64 x N) += A (64 x 16, four registers from A0) B (16 x N, shared memory, MN-major).
#define OPRT_WGMMA_RS_MN(N, TYPE, A0, A1, A2, A3, B) \
  "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" \
  OPRT_WGMMA_REGS_##N "}, {%" A0 ", %" A1 ", %" A2 ", %" A3 "}, %" B ", p, 1, 1, 1;\n}\n"

// d (64 x 128, 64 f32 per thread) = A B (+ d if accumulate), A and B K-major in shared memory.
template <class T>
__device__ __forceinline__ void wgmma_m64n128_ss(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  if constexpr (std::is_same_v<T, __half>)
    asm volatile(OPRT_WGMMA_SS(128, "f16", "64", "65", "66")
                 : OPRT_WGMMA_OUTS_128(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate));
  else
    asm volatile(OPRT_WGMMA_SS(128, "bf16", "64", "65", "66")
                 : OPRT_WGMMA_OUTS_128(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// d (64 x N, N / 2 f32 per thread) += A B, A a register fragment, B MN-major in shared memory.
template <class T, int N>
__device__ __forceinline__ void wgmma_rs_mn(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b) {
  static_assert(N == 64 || N == 128, "the shapes instantiated here");
  constexpr bool half = std::is_same_v<T, __half>;
  if constexpr (N == 128 && half)
    asm volatile(OPRT_WGMMA_RS_MN(128, "f16", "64", "65", "66", "67", "68")
                 : OPRT_WGMMA_OUTS_128(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
  else if constexpr (N == 128)
    asm volatile(OPRT_WGMMA_RS_MN(128, "bf16", "64", "65", "66", "67", "68")
                 : OPRT_WGMMA_OUTS_128(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
  else if constexpr (half)
    asm volatile(OPRT_WGMMA_RS_MN(64, "f16", "32", "33", "34", "35", "36")
                 : OPRT_WGMMA_OUTS_64(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
  else
    asm volatile(OPRT_WGMMA_RS_MN(64, "bf16", "32", "33", "34", "35", "36")
                 : OPRT_WGMMA_OUTS_64(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

}  // namespace oprt
