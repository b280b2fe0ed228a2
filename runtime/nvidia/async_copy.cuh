// Asynchronous global -> shared copies (cp.async, sm_80 and later): a thread issues many
// 16-byte copies without holding them in registers, so the bytes a block keeps in flight
// are bounded by its shared memory, not by its registers. Used to stage the next rows
// (or the next piece of a row) while the current one is computed.
//
//   copy16_async(smem_dst, global_src);   // both 16-byte aligned
//   async_commit();                        // closes a group of copies
//   async_wait<N>();                       // all but the newest N groups have landed
//
// Each thread waits only for its own copies: a thread that reads exactly the chunks it
// copied needs no __syncthreads() to see them. Before sm_80 (never built by default) the
// copy is a plain load and store, and commit / wait do nothing.
#pragma once

#include <cuda_runtime.h>

namespace oprt {

__device__ __forceinline__ void copy16_async(void* smem_dst, const void* global_src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  // .cg: cached in L2 only; the data is read from shared memory, never again from L1
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global_src) : "memory");
#else
  *static_cast<uint4*>(smem_dst) = *static_cast<const uint4*>(global_src);
#endif
}

__device__ __forceinline__ void async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace oprt
