// 16-byte vector access: the widest load a thread can issue, and what memory-bound
// kernels need to keep enough bytes in flight to saturate HBM.
//
//   Pack<float, 4> p = load_pack<4>(ptr + i);     // ptr + i must be 16-byte aligned
//   for_each_in_row(row, len, lane, lanes, [&](float v) { acc += v; });
#pragma once

#include <cstdint>

#include "cuda_launch.cuh"

namespace oprt {

template <class T>
constexpr int kPack = 16 / sizeof(T);  // elements in one 16-byte access

// Packs each thread loads before using any: HBM needs tens of MB in flight to reach its
// bandwidth, and one outstanding 16-byte load per thread is not enough on an H200.
constexpr int kBatch = 4;

template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <int N, class T>
__device__ __forceinline__ Pack<T, N> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, N>*>(p);
}

template <int N, class T>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, N>& v) {
  *reinterpret_cast<Pack<T, N>*>(p) = v;
}

// The same for data touched once (streaming: ld/st.global.cs, evict-first), so a large
// stream does not push data that will be reused out of L2.
template <int N, class T>
__device__ __forceinline__ Pack<T, N> load_pack_stream(const T* p) {
  static_assert(sizeof(Pack<T, N>) == sizeof(uint4), "a pack is 16 bytes");
  const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p));
  Pack<T, N> r;
  __builtin_memcpy(&r, &v, sizeof r);
  return r;
}

template <int N, class T>
__device__ __forceinline__ void store_pack_stream(T* p, const Pack<T, N>& v) {
  static_assert(sizeof(Pack<T, N>) == sizeof(uint4), "a pack is 16 bytes");
  uint4 u;
  __builtin_memcpy(&u, &v, sizeof u);
  __stcs(reinterpret_cast<uint4*>(p), u);
}

// Elements before `p` is aligned for a pack of E elements (p itself is element-aligned).
template <int E, class T>
__device__ __host__ __forceinline__ int64_t elements_to_alignment(const T* p) {
  return static_cast<int64_t>((-(reinterpret_cast<uintptr_t>(p) / sizeof(T))) & (E - 1));
}

// Calls visit(float) for every element of the contiguous row [row, row + len), the
// elements split over `lanes` cooperating threads (this one is `lane`): an unaligned
// head one element per lane, the body in 16-byte packs, then the tail. Batch: packs each
// thread loads before using any (more bytes in flight, more registers).
template <int Batch = kBatch, class T, class Visit>
__device__ __forceinline__ void for_each_in_row(const T* row, int64_t len, int lane, int lanes, Visit&& visit) {
  constexpr int E = kPack<T>;
  const int64_t head = min(elements_to_alignment<E>(row), len);
  if (lane < head) visit(to_float(row[lane]));
  const int64_t packs = (len - head) / E;
  const T* body = row + head;
  int64_t k = lane;
  for (; k + (Batch - 1) * lanes < packs; k += Batch * lanes) {  // all loads first: more bytes in flight
    Pack<T, E> p[Batch];
#pragma unroll
    for (int u = 0; u < Batch; ++u) p[u] = load_pack<E>(body + (k + u * lanes) * E);
#pragma unroll
    for (int u = 0; u < Batch; ++u)
#pragma unroll
      for (int e = 0; e < E; ++e) visit(to_float(p[u].v[e]));
  }
  for (; k < packs; k += lanes) {
    const Pack<T, E> p = load_pack<E>(body + k * E);
#pragma unroll
    for (int e = 0; e < E; ++e) visit(to_float(p.v[e]));
  }
  for (int64_t i = head + packs * E + lane; i < len; i += lanes) visit(to_float(row[i]));
}

// The same walk, writing out[i] = f(in[i]) over a contiguous row.
template <class TO, class TI, class F>
__device__ __forceinline__ void map_row(TO* out, const TI* in, int64_t len, int lane, int lanes, F&& f) {
  constexpr int E = kPack<TI> < kPack<TO> ? kPack<TI> : kPack<TO>;
  const int64_t head = min(elements_to_alignment<E>(in), len);
  if (elements_to_alignment<E>(out) != elements_to_alignment<E>(in)) {  // never both aligned: one by one
    for (int64_t i = lane; i < len; i += lanes) out[i] = from_float<TO>(f(to_float(in[i])));
    return;
  }
  if (lane < head) out[lane] = from_float<TO>(f(to_float(in[lane])));
  const int64_t packs = (len - head) / E;
  int64_t k = lane;
  for (; k + (kBatch - 1) * lanes < packs; k += kBatch * lanes) {
    Pack<TI, E> p[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) p[u] = load_pack<E>(in + head + (k + u * lanes) * E);
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      Pack<TO, E> q;
#pragma unroll
      for (int e = 0; e < E; ++e) q.v[e] = from_float<TO>(f(to_float(p[u].v[e])));
      store_pack<E>(out + head + (k + u * lanes) * E, q);
    }
  }
  for (; k < packs; k += lanes) {
    const Pack<TI, E> p = load_pack<E>(in + head + k * E);
    Pack<TO, E> q;
#pragma unroll
    for (int e = 0; e < E; ++e) q.v[e] = from_float<TO>(f(to_float(p.v[e])));
    store_pack<E>(out + head + k * E, q);
  }
  for (int64_t i = head + packs * E + lane; i < len; i += lanes) out[i] = from_float<TO>(f(to_float(in[i])));
}

// out[i] = f(a[i], b[i]) over contiguous rows of one dtype, packed when all three agree
// on alignment.
template <class T, class F>
__device__ __forceinline__ void zip_row(T* out, const T* a, const T* b, int64_t len, int lane, int lanes, F&& f) {
  constexpr int E = kPack<T>;
  const int64_t head = min(elements_to_alignment<E>(a), len);
  if (elements_to_alignment<E>(b) != head % E || elements_to_alignment<E>(out) != head % E) {
    for (int64_t i = lane; i < len; i += lanes) out[i] = from_float<T>(f(to_float(a[i]), to_float(b[i])));
    return;
  }
  if (lane < head) out[lane] = from_float<T>(f(to_float(a[lane]), to_float(b[lane])));
  const int64_t packs = (len - head) / E;
  int64_t k = lane;
  for (; k + (kBatch - 1) * lanes < packs; k += kBatch * lanes) {
    Pack<T, E> p[kBatch], q[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      p[u] = load_pack<E>(a + head + (k + u * lanes) * E);
      q[u] = load_pack<E>(b + head + (k + u * lanes) * E);
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      Pack<T, E> r;
#pragma unroll
      for (int e = 0; e < E; ++e) r.v[e] = from_float<T>(f(to_float(p[u].v[e]), to_float(q[u].v[e])));
      store_pack<E>(out + head + (k + u * lanes) * E, r);
    }
  }
  for (; k < packs; k += lanes) {
    const Pack<T, E> p = load_pack<E>(a + head + k * E), q = load_pack<E>(b + head + k * E);
    Pack<T, E> r;
#pragma unroll
    for (int e = 0; e < E; ++e) r.v[e] = from_float<T>(f(to_float(p.v[e]), to_float(q.v[e])));
    store_pack<E>(out + head + k * E, r);
  }
  for (int64_t i = head + packs * E + lane; i < len; i += lanes)
    out[i] = from_float<T>(f(to_float(a[i]), to_float(b[i])));
}

}  // namespace oprt
