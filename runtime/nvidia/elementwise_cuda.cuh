// Element-wise kernels.
//
// Contiguous operands (the common case) take the packed path: 16-byte loads and stores,
// a grid-stride loop over a grid sized from the SM count, unaligned heads and tails done
// element by element. Any other layout (transposed, strided, broadcast) takes the
// general path: offsets computed from the linear index through the plan's strides.
#pragma once

#include <climits>

#include "cuda_launch.cuh"
#include "strided_index.h"
#include "vector_io.cuh"

namespace oprt {

constexpr int kElementwiseThreads = 256;

// fn(off) handles the element at operand offsets off[0..N).
template <int N, class F>
__global__ void elementwise_kernel(ElementwisePlan<N> p, F fn) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += step) {
    int64_t off[N];
    p.offsets(i, off);
    fn(off);
  }
}

template <int N, class F>
void launch_elementwise(const ElementwisePlan<N>& p, F fn, oprt_stream stream, const char* name) {
  auto* kernel = elementwise_kernel<N, F>;
  kernel<<<resident_grid(kernel, kElementwiseThreads, p.numel, kElementwiseThreads), kElementwiseThreads, 0,
           as_cuda_stream(stream)>>>(p, fn);
  check_launch(name);
}

struct Identity {
  __device__ __forceinline__ float operator()(float v) const { return v; }
};

template <class TO, class TI, class F>
__global__ void map_contiguous_kernel(TO* __restrict__ out, const TI* __restrict__ in, int64_t n, F f) {
  map_row(out, in, n, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x, f);
}

template <class T, class F>
__global__ void zip_contiguous_kernel(T* __restrict__ out, const T* __restrict__ a, const T* __restrict__ b,
                                      int64_t n, F f) {
  zip_row(out, a, b, n, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x, f);
}

// zip over contiguous operands, one tile per block: block k takes packs
// [k * Batch * threads, (k + 1) * Batch * threads) (Batch loads of a and of b in flight per
// thread, all issued before any use), and no grid-stride loop: the grid is the tiles, so no
// wave is left uneven. Stream: evict-first loads and stores (__ldcs/__stcs) rather than plain
// ones. `head` elements before the first aligned pack and the tail after the last whole pack
// are done by block 0. Needs a, b and out equally misaligned (checked by the caller).
// ZipTiles names the shapes scripts/elementwise_sweep.py compares on the GPU.
struct ZipTiles {
  int batch;
  bool stream;
};

template <class T, class F, int Batch, bool Stream>
__global__ void __launch_bounds__(kElementwiseThreads) zip_tiles_kernel(T* __restrict__ out, const T* __restrict__ a,
                                                                        const T* __restrict__ b, int64_t n,
                                                                        int64_t head, F f) {
  constexpr int E = kPack<T>;
  constexpr int64_t kTilePacks = int64_t{kElementwiseThreads} * Batch;
  const int64_t packs = (n - head) / E;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kTilePacks + threadIdx.x;
  Pack<T, E> p[Batch], q[Batch];
#pragma unroll
  for (int u = 0; u < Batch; ++u) {
    const int64_t k = first + u * kElementwiseThreads;
    if (k < packs) {
      p[u] = Stream ? load_pack_stream<E>(a + head + k * E) : load_pack<E>(a + head + k * E);
      q[u] = Stream ? load_pack_stream<E>(b + head + k * E) : load_pack<E>(b + head + k * E);
    }
  }
#pragma unroll
  for (int u = 0; u < Batch; ++u) {
    const int64_t k = first + u * kElementwiseThreads;
    if (k < packs) {
      Pack<T, E> r;
#pragma unroll
      for (int e = 0; e < E; ++e) r.v[e] = from_float<T>(f(to_float(p[u].v[e]), to_float(q[u].v[e])));
      if (Stream)
        store_pack_stream<E>(out + head + k * E, r);
      else
        store_pack<E>(out + head + k * E, r);
    }
  }
  if (blockIdx.x == 0) {
    for (int64_t i = threadIdx.x; i < head; i += blockDim.x) out[i] = from_float<T>(f(to_float(a[i]), to_float(b[i])));
    for (int64_t i = head + packs * E + threadIdx.x; i < n; i += blockDim.x)
      out[i] = from_float<T>(f(to_float(a[i]), to_float(b[i])));
  }
}

template <class T, class F, int Batch, bool Stream>
bool launch_zip_tiles_as(T* out, const T* a, const T* b, int64_t n, int64_t head, F f, cudaStream_t stream) {
  constexpr int E = kPack<T>;
  constexpr int64_t kTilePacks = int64_t{kElementwiseThreads} * Batch;
  const int64_t tiles = std::max<int64_t>(1, ((n - head) / E + kTilePacks - 1) / kTilePacks);
  if (tiles > INT32_MAX) return false;
  zip_tiles_kernel<T, F, Batch, Stream>
      <<<static_cast<unsigned>(tiles), kElementwiseThreads, 0, stream>>>(out, a, b, n, head, f);
  return true;
}

// Launches zip_tiles_kernel in `shape` when a, b and out share their alignment; false otherwise
// (and for a shape not instantiated below).
template <class T, class F>
bool launch_zip_tiles(T* out, const T* a, const T* b, int64_t n, F f, cudaStream_t stream, ZipTiles shape) {
  constexpr int E = kPack<T>;
  const int64_t head = std::min<int64_t>(elements_to_alignment<E>(a), n);
  if (elements_to_alignment<E>(b) != elements_to_alignment<E>(a) ||
      elements_to_alignment<E>(out) != elements_to_alignment<E>(a))
    return false;
  if (shape.stream) {
    if (shape.batch == 4) return launch_zip_tiles_as<T, F, 4, true>(out, a, b, n, head, f, stream);
    if (shape.batch == 1) return launch_zip_tiles_as<T, F, 1, true>(out, a, b, n, head, f, stream);
  } else {
    if (shape.batch == 4) return launch_zip_tiles_as<T, F, 4, false>(out, a, b, n, head, f, stream);
    if (shape.batch == 2) return launch_zip_tiles_as<T, F, 2, false>(out, a, b, n, head, f, stream);
    if (shape.batch == 1) return launch_zip_tiles_as<T, F, 1, false>(out, a, b, n, head, f, stream);
  }
  return false;
}

// Enough threads that each handles a batch of 16-byte packs, no more than fit at once.
template <class Kernel>
unsigned packed_grid(Kernel* kernel, int64_t n, int pack) {
  return resident_grid(kernel, kElementwiseThreads, (n + pack - 1) / pack, int64_t{kElementwiseThreads} * kBatch);
}

// Operands whose innermost dim is contiguous or broadcast (stride 1 or 0) and an out that is
// contiguous along it: a bias row added to every row of a matrix, a column vector, a scalar,
// a sliced or offset view. These took the general path before, a 64-bit division chain per
// element: `vector_add(x, bias)` over 8192 rows moved 591 GB/s where torch moves 1.5 TB/s on
// the H200 (issue 29). Here each thread takes one 16-byte pack of a row (as zip_tiles_kernel's
// plain1 shape, the fastest of scripts/elementwise_sweep.py), a row's start comes from the outer
// dims' strides once per row, and a broadcast operand is read once per pack. Threads of a block
// cover up to 256 packs of a row (x) and as many rows as fill 256 threads (y), so short rows do
// not leave most threads idle; the grid's y strides over rows past 65535 blocks.
template <int N>
struct InnerRows {
  ElementwisePlan<N> outer;  // the dims but the innermost: outer.numel rows
  int64_t row_len;
  int64_t inner[N];  // each operand's stride along the innermost dim: 1 (out: always), or 0
};

// The rows of `p` when every operand moves by 1 or 0 along its innermost dim (out by 1).
template <int N>
inline bool inner_rows(const ElementwisePlan<N>& p, InnerRows<N>& r) {
  if (p.rank < 1 || p.numel == 0) return false;
  const int last = p.rank - 1;
  for (int k = 0; k < N; ++k)
    if (p.strides[k][last] != 1 && (k == 0 || p.strides[k][last] != 0)) return false;
  r = {};
  r.outer.rank = last;
  r.row_len = p.shape[last];
  r.outer.numel = p.numel / r.row_len;
  for (int d = 0; d < last; ++d) {
    r.outer.shape[d] = p.shape[d];
    for (int k = 0; k < N; ++k) r.outer.strides[k][d] = p.strides[k][d];
  }
  for (int k = 0; k < N; ++k) r.inner[k] = p.strides[k][last];
  return true;
}

// E values of `row` from element c: a pack where it moves (aligned, as the caller checked), its
// one value repeated where it is broadcast.
template <int E, class T>
__device__ __forceinline__ Pack<T, E> row_pack(const T* row, int64_t c, bool moves) {
  if (moves) return load_pack<E>(row + c);
  Pack<T, E> p;
  const T v = row[0];
#pragma unroll
  for (int e = 0; e < E; ++e) p.v[e] = v;
  return p;
}

template <class T, class F>
__global__ void __launch_bounds__(kElementwiseThreads) zip_rows_kernel(InnerRows<3> r, T* __restrict__ out,
                                                                       const T* __restrict__ a,
                                                                       const T* __restrict__ b, F f) {
  constexpr int E = kPack<T>;
  const int64_t c = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * E;
  if (c >= r.row_len) return;
  const bool a_moves = r.inner[1] != 0, b_moves = r.inner[2] != 0;
  const int64_t step = static_cast<int64_t>(gridDim.y) * blockDim.y;
  for (int64_t row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; row < r.outer.numel; row += step) {
    int64_t off[3];
    r.outer.offsets(row, off);
    T* o = out + off[0];
    const T *x = a + off[1], *y = b + off[2];
    const bool packed = c + E <= r.row_len && elements_to_alignment<E>(o) == 0 &&
                        (!a_moves || elements_to_alignment<E>(x) == 0) && (!b_moves || elements_to_alignment<E>(y) == 0);
    if (packed) {
      const Pack<T, E> p = row_pack<E>(x, c, a_moves), q = row_pack<E>(y, c, b_moves);
      Pack<T, E> v;
#pragma unroll
      for (int e = 0; e < E; ++e) v.v[e] = from_float<T>(f(to_float(p.v[e]), to_float(q.v[e])));
      store_pack<E>(o + c, v);
    } else {  // a row that starts off a 16-byte boundary, or its last partial pack
      for (int64_t i = c; i < c + E && i < r.row_len; ++i)
        o[i] = from_float<T>(f(to_float(x[i * r.inner[1]]), to_float(y[i * r.inner[2]])));
    }
  }
}

template <class T, class F>
void launch_zip_rows(const InnerRows<3>& r, T* out, const T* a, const T* b, F f, cudaStream_t stream) {
  constexpr int E = kPack<T>;
  const int64_t packs = (r.row_len + E - 1) / E;
  unsigned tx = 1;  // a power of two: the block's rows fill it whole
  while (tx < kElementwiseThreads && tx < packs) tx <<= 1;
  const unsigned ty = kElementwiseThreads / tx;
  const int64_t gx = (packs + tx - 1) / tx, gy = (r.outer.numel + ty - 1) / ty;
  zip_rows_kernel<T, F><<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(std::min<int64_t>(gy, 65535))),
                          dim3(tx, ty), 0, stream>>>(r, out, a, b, f);
}

}  // namespace oprt
