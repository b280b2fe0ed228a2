// softmax over a leading dim ("columns"): rows whose neighbours are adjacent in memory, each
// row a column walked with a stride. Before this, a thread walked each column alone:
// 8192x8192 f32 over dim 0 took 4.59 ms on the H200 (0.10x torch.compile), 32 blocks for the
// whole GPU and one 4-byte load in flight per thread.
//
// A block takes a tile of adjacent columns and splits the walk down them over its threads:
//   - a thread holds E neighbouring columns as one 16-byte pack (E = 4 for f32, 8 for 16-bit)
//     where the layout allows (RowPlan::columns_pack, bases 16-byte aligned), else E = 1;
//   - column_lanes<E>() threads side by side cover one 128-byte line of a step (8 packs, or 32
//     single elements), so a warp reads 32 / lanes steps of the tile at once, and the block's W
//     warps W * 32 / lanes steps (the "slots");
//   - each thread keeps an online (max, sum) per column over the steps of its slot, with
//     column_unroll<E>() loads issued before any is used; the slots' partials meet by shuffles in the
//     warp, then through shared memory across warps;
//   - a second walk writes exp(x - max) / sum, bottom up: the last steps read are the likeliest
//     to be still in L2.
// Same arithmetic as the row kernels (OnlineSoftmax, __expf, one 1/sum), so inf and NaN come
// out as torch's.
#pragma once

#include <algorithm>
#include <cstdint>

#include "block_reduce.cuh"
#include "cuda_launch.cuh"
#include "strided_index.h"
#include "vector_io.cuh"

namespace oprt {

constexpr int kColumnMaxWarps = 32;  // a block of up to 1024 threads
constexpr int kColumnTileWidth = 64;  // columns per tile at most: 8 packs of 8 16-bit values

// Threads side by side on one step of a tile: 8 packs of 16 bytes, or 32 single elements.
template <int E>
constexpr int column_lanes() { return E == 1 ? 32 : 8; }
// Steps each thread loads before using any: 16 values, or 8 single elements.
template <int E>
constexpr int column_unroll() { return E == 1 ? 8 : 16 / E; }

template <class T, int E>
__global__ void __launch_bounds__(1024) softmax_column_tiles(RowPlan p, int64_t tiles, const T* __restrict__ x,
                                                             T* __restrict__ y) {
  constexpr int L = column_lanes<E>(), U = column_unroll<E>(), width = L * E;  // columns per tile
  static_assert(width <= kColumnTileWidth, "a tile fits the shared tables");
  __shared__ MaxSum part[kColumnMaxWarps][kColumnTileWidth];
  __shared__ MaxSum total[kColumnTileWidth];  // per column: max, 1 / sum
  const int warps = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int c = lane % L;                                // this thread's pack of the tile
  const int slot = warp * (32 / L) + lane / L, slots = warps * (32 / L);
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t first = (tile * L + c) * E;  // the first of this thread's E columns (rows of the plan)
    const bool active = first < p.rows;
    int64_t in_off = 0, out_off = 0;
    if (active) p.row_offsets(first, in_off, out_off);
    MaxSum acc[E];
#pragma unroll
    for (int e = 0; e < E; ++e) acc[e] = OnlineSoftmax::identity();
    if (active) {
      for (int64_t r0 = slot; r0 < p.row_len; r0 += int64_t{U} * slots) {
        Pack<T, E> v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {  // every load first: U packs in flight
          const int64_t r = r0 + int64_t{u} * slots;
          if (r < p.row_len) v[u] = load_pack<E>(x + in_off + r * p.in_row_stride);
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (r0 + int64_t{u} * slots < p.row_len)
#pragma unroll
            for (int e = 0; e < E; ++e) OnlineSoftmax::add(acc[e], to_float(v[u].v[e]));
      }
    }
    // The warp's slots holding the same pack: lanes c, c + L, c + 2L, ...
#pragma unroll
    for (int e = 0; e < E; ++e)
      for (int offset = 16; offset >= L; offset >>= 1) acc[e] = OnlineSoftmax::apply(acc[e], shfl_xor(acc[e], offset));
    if (lane < L)
#pragma unroll
      for (int e = 0; e < E; ++e) part[warp][c * E + e] = acc[e];
    __syncthreads();
    if (threadIdx.x < width) {
      MaxSum t = part[0][threadIdx.x];
      for (int w = 1; w < warps; ++w) t = OnlineSoftmax::apply(t, part[w][threadIdx.x]);
      total[threadIdx.x] = {t.max, 1.f / t.sum};
    }
    __syncthreads();
    if (active) {
      float m[E], inv[E];
#pragma unroll
      for (int e = 0; e < E; ++e) m[e] = total[c * E + e].max, inv[e] = total[c * E + e].sum;
      // this slot's last step (k: steps past its first), then up, U steps at a time
      for (int64_t k = slot < p.row_len ? (p.row_len - 1 - slot) / slots : -1; k >= 0; k -= U) {
        Pack<T, E> v[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (k - u >= 0) v[u] = load_pack<E>(x + in_off + (slot + (k - u) * slots) * p.in_row_stride);
#pragma unroll
        for (int u = 0; u < U; ++u) {
          if (k - u < 0) break;
          Pack<T, E> o;
#pragma unroll
          for (int e = 0; e < E; ++e) o.v[e] = from_float<T>(__expf(to_float(v[u].v[e]) - m[e]) * inv[e]);
          store_pack<E>(y + out_off + (slot + (k - u) * slots) * p.out_row_stride, o);
        }
      }
    }
    __syncthreads();  // part and total are rewritten by the next tile
  }
}

// Warps per block: enough that the tiles' blocks fill the GPU (~64 warps per SM), no more than
// the reduced dim has steps for, 1..32.
inline int column_warps(int64_t tiles, int64_t row_len, int lanes, int sms) {
  const int64_t want = (int64_t{64} * sms + tiles - 1) / tiles;
  const int64_t useful = (row_len * lanes + 31) / 32;  // warps whose slots all have a step
  return static_cast<int>(std::clamp<int64_t>(std::min(want, useful), 1, kColumnMaxWarps));
}

template <class T, int E>
void launch_column_tiles_as(const RowPlan& p, const T* x, T* y, cudaStream_t s) {
  constexpr int L = column_lanes<E>();
  const int64_t tiles = (p.rows + int64_t{L} * E - 1) / (int64_t{L} * E);
  const int warps = column_warps(tiles, p.row_len, L, sm_count());
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 30));
  softmax_column_tiles<T, E><<<grid, warps * 32, 0, s>>>(p, tiles, x, y);
}

// Packs where the layout and both bases allow, else one column per thread.
template <class T>
void launch_column_tiles(const RowPlan& p, const T* x, T* y, cudaStream_t s) {
  constexpr int E = kPack<T>;
  const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  if (aligned && p.columns_pack(E, true)) return launch_column_tiles_as<T, E>(p, x, y, s);
  launch_column_tiles_as<T, 1>(p, x, y, s);
}

}  // namespace oprt
