// softmax "bulk": whole rows moved by the copy engine (sm_90's cp.async.bulk), an experiment
// toward issue 16's 80% of the copy ceiling for 16-bit 8192x8192 (RowGroups: 59-60%; its ncu
// report shows DRAM at 48%, two blocks of 512 threads per SM and at most a row or two in flight
// per block, data/ncu/h200-goal-kernels.log).
//
// A persistent block walks its rows (blockIdx.x, + gridDim.x, ...) through `stages` row buffers
// in shared memory. One thread asks for a whole row with a single bulk copy that completes on
// the stage's mbarrier, so a block keeps stages - 1 rows in flight without a register or an
// instruction per 16 bytes; three blocks of four 16 KiB stages keep up to nine rows per SM on
// their way. The block then reads its row from shared memory three times (max, exp-sum, and
// exp * 1/sum written back in place), and one bulk store sends the row out. A stage is loaded
// again only after the store from it has read it (cp.async.bulk.wait_group.read).
//
// Same arithmetic as the register kernels (nan_max, __expf(v - m), one 1/sum), so torch's
// inf/NaN rows come out as theirs. Needs rows of a multiple of 16 bytes, 16-byte aligned
// (checked on the host), and compute capability 9.0 (has_bulk_copy()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "block_reduce.cuh"
#include "cuda_launch.cuh"
#include "row_groups.cuh"
#include "strided_index.h"
#include "vector_io.cuh"

namespace oprt {

constexpr int kBulkMaxStages = 8;
constexpr int64_t kBulkMaxRowBytes = 64 * 1024;  // two stages of the longest row still fit

// OPRT_SOFTMAX_STRATEGY=bulk... values: (threads per block, stages), for the sweep.
struct BulkShape {
  const char* name;
  int threads, stages;
};
constexpr BulkShape kBulkShapes[] = {{"bulk", 256, 4},     {"bulk-512", 512, 4}, {"bulk-128", 128, 4},
                                     {"bulk-256-2", 256, 2}, {"bulk-256-6", 256, 6}, {"bulk-1024", 1024, 4}};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// Arrives (the one expected arrival) and adds `bytes` to the transfers the phase waits for.
__device__ __forceinline__ void mbarrier_expect_bytes(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(smem_addr(src)),
               "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// All but the newest N bulk stores have finished reading shared memory.
template <int N>
__device__ __forceinline__ void bulk_stores_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void bulk_stores_done() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
#endif

template <class T>
__global__ void __launch_bounds__(1024) softmax_bulk(RowPlan p, int stages, const T* __restrict__ x, T* __restrict__ y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int E = kPack<T>;
  extern __shared__ __align__(128) unsigned char bulk_smem[];
  __shared__ uint64_t full[kBulkMaxStages];
  __shared__ float scratch[32];
  T* const buffers = reinterpret_cast<T*>(bulk_smem);
  const int64_t packs = p.row_len / E;
  const unsigned row_bytes = static_cast<unsigned>(p.row_len * sizeof(T));
  auto stage = [&](int64_t i) { return buffers + i % stages * p.row_len; };
  auto row_of = [&](int64_t i) { return blockIdx.x + i * gridDim.x; };
  auto load = [&](int64_t i) {  // thread 0: this block's i-th row into its stage, if there is one
    if (row_of(i) >= p.rows) return;
    int64_t in_off, out_off;
    p.row_offsets(row_of(i), in_off, out_off);
    uint64_t* bar = &full[i % stages];
    mbarrier_expect_bytes(bar, row_bytes);
    bulk_load(stage(i), x + in_off, row_bytes, bar);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) mbarrier_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the copy engine
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < stages; ++s) load(s);
  for (int64_t i = 0; row_of(i) < p.rows; ++i) {
    int64_t in_off, out_off;
    p.row_offsets(row_of(i), in_off, out_off);
    mbarrier_wait(&full[i % stages], static_cast<unsigned>(i / stages) & 1);  // the stage's (i / stages)-th fill
    T* const v = stage(i);
    float m = -kInf;
    for (int64_t k = threadIdx.x; k < packs; k += blockDim.x) {
      const Pack<T, E> q = *reinterpret_cast<const Pack<T, E>*>(v + k * E);
#pragma unroll
      for (int e = 0; e < E; ++e) m = nan_max(m, to_float(q.v[e]));
    }
    m = block_reduce<NanMax>(m, scratch);
    float sum = 0.f;
    for (int64_t k = threadIdx.x; k < packs; k += blockDim.x) {
      const Pack<T, E> q = *reinterpret_cast<const Pack<T, E>*>(v + k * E);
#pragma unroll
      for (int e = 0; e < E; ++e) sum += __expf(to_float(q.v[e]) - m);
    }
    sum = block_reduce<Sum>(sum, scratch);
    const float inv = 1.f / sum;
    for (int64_t k = threadIdx.x; k < packs; k += blockDim.x) {  // each thread rewrites only its own packs
      Pack<T, E> q = *reinterpret_cast<const Pack<T, E>*>(v + k * E);
#pragma unroll
      for (int e = 0; e < E; ++e) q.v[e] = from_float<T>(__expf(to_float(q.v[e]) - m) * inv);
      *reinterpret_cast<Pack<T, E>*>(v + k * E) = q;
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // our writes, before the copy engine reads
    __syncthreads();
    if (threadIdx.x == 0) {
      bulk_store(y + out_off, v, row_bytes);
      // The previous row's stage is free once its store has read it (all stores but this newest
      // one): refill it with the row `stages` after that one.
      if (i >= 1) {
        bulk_stores_read<1>();
        load(i - 1 + stages);
      }
    }
  }
  if (threadIdx.x == 0) bulk_stores_done();  // shared memory must outlive the stores that read it
#endif
}

// Whether the current device has the bulk copies (compute capability 9.0 and later).
inline bool has_bulk_copy() { return compute_capability_major() >= 9; }

// The bulk shape a strategy value names, or nullptr.
inline const BulkShape* bulk_shape(const char* name) {
  for (const BulkShape& b : kBulkShapes)
    if (std::strcmp(b.name, name) == 0) return &b;
  return nullptr;
}

// Launches softmax_bulk with `threads` per block and up to `stages` row buffers; false when
// that cannot launch here (too few stages fit, no bulk copies), so the caller runs another kernel.
template <class T>
bool launch_bulk(const RowPlan& p, int threads, int stages, const T* x, T* y, cudaStream_t s) {
  if (!has_bulk_copy()) return false;
  auto* kernel = softmax_bulk<T>;
  const size_t row_bytes = static_cast<size_t>(p.row_len) * sizeof(T);
  while (stages >= 2 && !can_launch(reinterpret_cast<const void*>(kernel), threads, stages * row_bytes)) --stages;
  if (stages < 2) return false;
  const size_t smem = stages * row_bytes;
  const int fit = resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), threads, smem);
  if (fit == 0) return false;
  const int64_t grid = std::min<int64_t>(p.rows, int64_t{fit} * sm_count());
  kernel<<<static_cast<unsigned>(grid), threads, smem, s>>>(p, stages, x, y);
  return true;
}

}  // namespace oprt
