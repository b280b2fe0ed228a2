// The skinny matmul: at most kSkinnyRows output rows (decode: a few tokens times a weight matrix),
// or that many columns, transposed on the host to rows (matmul_workspace_plan.h's skinny()).
//
// Such a product reads each element of B once and multiplies it by at most 8 rows of A: B's bytes
// set the time, so the kernel is built to stream B at the memory's speed on CUDA cores, f32
// accumulation for every dtype, any strides (16-byte loads where the layout and pointer allow them,
// element loads elsewhere). Two forms, by which dim of B is contiguous:
// - K contiguous (x @ W.t() with W row-major, the usual Linear layout): a warp takes 4 columns, its
//   lanes walk K in 8-element chunks (one 16-byte load per column per chunk), and a shuffle tree
//   sums the lanes.
// - N contiguous (x @ W): a lane takes 8 adjacent columns (one 16-byte load per k), the 8 warps
//   of a block walk K interleaved, and shared memory sums the warps.
// A batch of one with too few blocks to fill the GPU also splits K over grid y: each split writes
// its f32 sums to the workspace and matmul_sum_splits.cuh adds them in split order.
#pragma once

#include <cstdint>
#include <utility>

#include "cuda_launch.cuh"
#include "matmul_sum_splits.cuh"
#include "matmul_workspace_plan.h"

namespace oprt::matmul_skinny {

using matmul_pack::kSkinnyRows;
constexpr int kThreads = static_cast<int>(matmul_pack::kSkinnyThreads), kWarps = kThreads / 32;
constexpr int kMinBlocks = 2;  // at most 128 registers a thread: 16 warps per SM or more to hide B's latency
constexpr int kChunk = 8;  // elements per load: 16 bytes of a 16-bit dtype, two 16-byte loads of f32
constexpr int kWarpColumns = static_cast<int>(matmul_pack::kSkinnyColumnsKContiguous) / kWarps;
static_assert(matmul_pack::kSkinnyColumnsNContiguous == 32 * kChunk, "a warp's lanes cover a block's columns");
static_assert(matmul_pack::kSkinnySplitDepth % (32 * kChunk) == 0, "splits start on whole chunks of every lane");

// x[e] = p[(i + e) * stride] for i + e < end (0 past it), as floats. `vec`: stride 1 and p + i
// 16-byte aligned, so a whole chunk is one (two for f32) 16-byte load.
template <class T>
__device__ __forceinline__ void load_chunk(float (&x)[kChunk], const T* p, int64_t stride, int64_t i, int64_t end,
                                           bool vec) {
  if (vec && i + kChunk <= end) {
    constexpr int per_load = 16 / sizeof(T);
#pragma unroll
    for (int v = 0; v < kChunk / per_load; ++v) {
      const uint4 u = *reinterpret_cast<const uint4*>(p + i + v * per_load);
      const T* e = reinterpret_cast<const T*>(&u);
#pragma unroll
      for (int j = 0; j < per_load; ++j) x[v * per_load + j] = to_float(e[j]);
    }
  } else {
#pragma unroll
    for (int e = 0; e < kChunk; ++e) x[e] = i + e < end ? to_float(p[(i + e) * stride]) : 0.f;
  }
}

// Where sum (row m, column n) of batch z goes: the output, or split y's partials.
template <class T>
__device__ __forceinline__ void store(T* out, float* partials, const MatmulPlan& p, int64_t z, int64_t m, int64_t n,
                                      float sum) {
  if (partials) partials[(blockIdx.y * p.m + m) * p.n + n] = sum;
  else out[z * p.o_batch + m * p.o_m + n * p.o_n] = from_float<T>(sum);
}

// B with K contiguous (or no unit stride at all). ROWS >= p.m (a power of two); grid (column
// blocks, splits, batches).
template <class T, int ROWS>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    skinny_k_contiguous(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                        float* __restrict__ partials, MatmulPlan p, int64_t k_per_split, bool a_vec, bool b_vec) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t n0 = (int64_t{blockIdx.x} * kWarps + warp) * kWarpColumns;
  if (n0 >= p.n) return;  // no barrier below: a warp without columns leaves
  const int64_t k0 = blockIdx.y * k_per_split, k1 = k0 + k_per_split < p.k ? k0 + k_per_split : p.k;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T* ga = a + z * p.a_batch;
    const T* gb = b + z * p.b_batch;
    float acc[ROWS][kWarpColumns] = {};
#pragma unroll 1  // one chunk of every column per trip: 4 loads in flight a lane, no spills
    for (int64_t k = k0 + lane * kChunk; k < k1; k += 32 * kChunk) {
      float bv[kWarpColumns][kChunk];
#pragma unroll
      for (int c = 0; c < kWarpColumns; ++c) {
        if (n0 + c < p.n) load_chunk(bv[c], gb + (n0 + c) * p.b_n, p.b_k, k, k1, b_vec);
        else
#pragma unroll
          for (int e = 0; e < kChunk; ++e) bv[c][e] = 0.f;
      }
#pragma unroll
      for (int m = 0; m < ROWS; ++m) {
        if (m >= p.m) break;
        float av[kChunk];
        load_chunk(av, ga + m * p.a_m, p.a_k, k, k1, a_vec);
#pragma unroll
        for (int c = 0; c < kWarpColumns; ++c)
#pragma unroll
          for (int e = 0; e < kChunk; ++e) acc[m][c] += av[e] * bv[c][e];
      }
    }
#pragma unroll
    for (int m = 0; m < ROWS; ++m)
#pragma unroll
      for (int c = 0; c < kWarpColumns; ++c) {
        float v = acc[m][c];
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
        acc[m][c] = v;
      }
    if (lane == 0)
#pragma unroll
      for (int m = 0; m < ROWS; ++m)
#pragma unroll
        for (int c = 0; c < kWarpColumns; ++c)
          if (m < p.m && n0 + c < p.n) store(out, partials, p, z, m, n0 + c, acc[m][c]);
  }
}

// B with N contiguous: lane l of every warp takes columns n0 + 8 l .. n0 + 8 l + 7, warp w the
// k-rows k0 + w, k0 + w + 8, ...; shared memory then sums the 8 warps' partial sums per column.
template <class T, int ROWS>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    skinny_n_contiguous(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                        float* __restrict__ partials, MatmulPlan p, int64_t k_per_split, bool b_vec) {
  __shared__ float sums[kWarps][32 * kChunk];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t n_block = int64_t{blockIdx.x} * 32 * kChunk, n = n_block + lane * kChunk;
  const int64_t k0 = blockIdx.y * k_per_split, k1 = k0 + k_per_split < p.k ? k0 + k_per_split : p.k;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T* ga = a + z * p.a_batch;
    const T* gb = b + z * p.b_batch;
    float acc[ROWS][kChunk] = {};
#pragma unroll 4
    for (int64_t k = k0 + warp; k < k1; k += kWarps) {
      float bv[kChunk];
      load_chunk(bv, gb + k * p.b_k, int64_t{1}, n, p.n, b_vec);
#pragma unroll
      for (int m = 0; m < ROWS; ++m) {
        if (m >= p.m) break;
        const float x = to_float(ga[m * p.a_m + k * p.a_k]);  // one address per warp: a broadcast
#pragma unroll
        for (int e = 0; e < kChunk; ++e) acc[m][e] += x * bv[e];
      }
    }
#pragma unroll
    for (int m = 0; m < ROWS; ++m) {
      if (m >= p.m) break;  // the same in every thread: the barriers below are reached by all or none
#pragma unroll
      for (int e = 0; e < kChunk; ++e) sums[warp][lane * kChunk + e] = acc[m][e];
      __syncthreads();
      const int64_t col = n_block + threadIdx.x;  // kThreads == 32 * kChunk columns, one per thread
      float v = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) v += sums[w][threadIdx.x];
      if (col < p.n) store(out, partials, p, z, m, col, v);
      __syncthreads();  // the next row overwrites sums
    }
  }
}

// 16-byte loads along the unit-stride dim of an operand: its pointer, and the stride from one of
// its rows to the next (when there is more than one) and from one batch to the next, 16-byte aligned.
template <class T>
bool vector_rows(const T* ptr, int64_t inner_stride, int64_t row_stride, int64_t rows, int64_t batch_stride) {
  return matmul_pack::rows_ok(inner_stride, row_stride, rows, batch_stride, sizeof(T)) &&
         reinterpret_cast<uintptr_t>(ptr) % 16 == 0;
}

template <class T, int ROWS>
void launch_rows(const matmul_pack::Skinny& s, const MatmulPlan& p, const T* a, const T* b, T* out, float* partials,
                 cudaStream_t stream) {
  const int64_t columns = s.n_contiguous ? matmul_pack::kSkinnyColumnsNContiguous : matmul_pack::kSkinnyColumnsKContiguous;
  const int64_t ab = p.batch > 1 ? p.a_batch : 0, bb = p.batch > 1 ? p.b_batch : 0;
  const dim3 grid(static_cast<unsigned>((p.n + columns - 1) / columns), static_cast<unsigned>(s.splits),
                  static_cast<unsigned>(std::min<int64_t>(p.batch, 65535)));
  float* to = s.splits > 1 ? partials : nullptr;
  if (s.n_contiguous) {
    skinny_n_contiguous<T, ROWS><<<grid, kThreads, 0, stream>>>(a, b, out, to, p, s.k_per_split,
                                                               vector_rows(b, p.b_n, p.b_k, p.k, bb));
  } else {
    skinny_k_contiguous<T, ROWS><<<grid, kThreads, 0, stream>>>(
        a, b, out, to, p, s.k_per_split, vector_rows(a, p.a_k, p.a_m, p.m, ab), vector_rows(b, p.b_k, p.b_n, p.n, bb));
  }
  check_launch("matmul kernel (skinny)");
  if (s.splits > 1) matmul_sum_splits::launch(partials, static_cast<int>(s.splits), out, p, stream);
}

// out = a @ b for a call skinny() took (s.on), partials the workspace's split-K part.
template <class T>
void run(const matmul_pack::Skinny& s, const MatmulPlan& plan, const T* a, const T* b, T* out, float* partials,
         cudaStream_t stream) {
  const MatmulPlan p = s.transposed ? matmul_pack::transposed(plan) : plan;
  if (s.transposed) std::swap(a, b);
  static_assert(kSkinnyRows == 8, "the instantiations below cover 1..8 rows");
  if (p.m <= 1) return launch_rows<T, 1>(s, p, a, b, out, partials, stream);
  if (p.m <= 2) return launch_rows<T, 2>(s, p, a, b, out, partials, stream);
  if (p.m <= 4) return launch_rows<T, 4>(s, p, a, b, out, partials, stream);
  launch_rows<T, 8>(s, p, a, b, out, partials, stream);
}

}  // namespace oprt::matmul_skinny
