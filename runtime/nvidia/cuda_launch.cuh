// CUDA plumbing for the nvidia backend: errors to status codes, grid sizing, streams,
// and dtype dispatch over float / __half / __nv_bfloat16.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "errors.h"

namespace oprt {

inline void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) fail(OPRT_STATUS_DEVICE_ERROR, what, ": ", cudaGetErrorString(err));
}

// Call after a launch: configuration errors surface here; faults surface at the next sync.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

inline cudaStream_t as_cuda_stream(oprt_stream s) { return static_cast<cudaStream_t>(s); }

// Streaming multiprocessors of the current device (cached per device).
int sm_count();

// The current device's compute capability major version (8: sm_80 Ampere, 9: sm_90 Hopper); cached.
int compute_capability_major();

// The most blocks worth launching for a grid-stride kernel: a few waves over every SM.
int grid_limit(int blocks_per_sm);

inline unsigned grid_for(int64_t work_items, int64_t per_block, int blocks_per_sm = 8) {
  const int64_t need = (work_items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(need, grid_limit(blocks_per_sm))));
}

// Blocks of `kernel` at `threads` per block (and `smem` bytes of dynamic shared memory)
// that fit on one SM at once (cached). Raises the kernel's dynamic shared memory limit
// to `smem` first (allow_dynamic_smem).
int resident_blocks_per_sm(const void* kernel, int threads, size_t smem = 0);

// Lets `kernel` launch with `smem` bytes of dynamic shared memory (past 48 KiB minus its
// static shared memory a kernel must opt in, per device); cached, so the attribute is
// set once per kernel, device and size.
void allow_dynamic_smem(const void* kernel, size_t smem);

// The environment variable `name`, or `fallback` when it is unset or empty. For the
// strategy overrides (OPRT_SOFTMAX_STRATEGY, ...) that let one GPU run benchmark an old
// kernel beside its replacement; the ops read them when a descriptor is created.
const char* env_or(const char* name, const char* fallback);

// Blocks of `kernel` that fit on the whole current device at once (resident_blocks_per_sm
// times sm_count), raising its dynamic shared memory limit to `smem` first. Asked on every
// launch, so answered from a small per-thread cache (one cudaGetDevice, no lock); a miss
// goes to resident_blocks_per_sm, whose mutex and map (and two more cudaGetDevice) were
// host time on each eager call.
int64_t resident_capacity(const void* kernel, int threads, size_t smem = 0);

// The grid for a grid-stride kernel: no more blocks than can run at once. A grid larger
// than what fits runs in two uneven waves: the blocks that start late finish late, and
// the GPU idles meanwhile (it cost vector_add ~6% at 1 GiB on an H200).
template <class Kernel>
unsigned resident_grid(Kernel* kernel, int threads, int64_t work_items, int64_t per_block) {
  const int64_t need = (work_items + per_block - 1) / per_block;
  const int64_t fit = resident_capacity(reinterpret_cast<const void*>(kernel), threads);
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(need, fit)));
}

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <class T> struct Type { using type = T; };

template <class F>
void dispatch_dtype(oprt_dtype dtype, F&& fn) {
  switch (dtype) {
    case OPRT_DTYPE_F32: return fn(Type<float>{});
    case OPRT_DTYPE_F16: return fn(Type<__half>{});
    case OPRT_DTYPE_BF16: return fn(Type<__nv_bfloat16>{});
  }
  fail(OPRT_STATUS_BAD_DTYPE, "dtype code ", static_cast<int>(dtype), " is unknown");
}

}  // namespace oprt
