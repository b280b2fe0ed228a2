// Row groups: a row handled by `lanes` threads of a block, `blockDim.x / lanes` rows per
// block at once. For short rows (reduce_sum, softmax) lanes <= 32 divides a warp between
// several rows, so a 128-element row costs 3 shuffles instead of 5 and a warp keeps four
// rows' loads in flight; softmax's configurable long-row kernel uses lanes > 32 (whole
// warps per row). Also the parser of the OPRT_*_CONFIG launch overrides.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <mutex>
#include <tuple>
#include <string>

#include "block_reduce.cuh"
#include "cuda_launch.cuh"

namespace oprt {

// Combines v over the aligned group of `lanes` lanes (a power of two <= 32) this lane is
// in; every lane of the warp calls it (the shuffles name the whole warp).
template <class Op>
__device__ __forceinline__ typename Op::Value group_reduce(typename Op::Value v, int lanes) {
  for (int offset = lanes >> 1; offset > 0; offset >>= 1) v = Op::apply(v, shfl_xor(v, offset));
  return v;
}

// Short-row shape: `lanes` threads per row, `packs` 16-byte packs per thread (1, 2, 4 or
// 8, the kernels' template instances). lanes == 0: the row is too long for it.
struct ShortShape {
  int lanes = 0;
  int packs = 0;
};

inline int next_pow2(int64_t v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

// 16 values per lane (kShortLaneValues), fewer lanes when the row is shorter: a 128-long
// f32 row takes 8 lanes of 4 packs (4 rows per warp), a 128-long bf16 row 8 lanes of 2
// packs, rows past 512 elements 32 lanes of up to 8 packs. Values, not bytes: the H200
// sweep (data/results/2026-12-03-h200-goals-rows-sweep.json) found each kernel's best at 16 values per
// lane for both widths where the two differed (reduce_sum 262144x128: f32 lanes=8, bf16
// lanes=8, 1.37x torch against 1.31x at 4 lanes; softmax 131072x256 bf16: lanes=16,
// 1.23x torch against 0.93x at 8 lanes); a 16-bit lane holding 32 values (the old rule:
// 4 packs, 64 bytes, like f32) converts and adds twice as many values per load. softmax
// 131072x256 f32 is within 3% of its best (32 lanes) at 16. `lanes` > 0 forces the lanes
// per row (OPRT_*_CONFIG lanes=); packs then grow up to 8.
constexpr int kShortLaneValues = 16;

inline ShortShape short_shape(int64_t row_len, int pack, int lanes = 0) {
  const int64_t packs = (row_len + pack - 1) / pack;
  ShortShape s;
  s.lanes = lanes > 0 ? lanes
                      : static_cast<int>(std::min<int64_t>(32, next_pow2((row_len + kShortLaneValues - 1) / kShortLaneValues)));
  s.packs = next_pow2((packs + s.lanes - 1) / s.lanes);
  if (s.packs > 8) return {};
  return s;
}

// Whether `kernel` can launch blocks of `threads` with `smem` bytes of dynamic shared
// memory on the current device (its registers and static shared memory counted), asked
// before resident_blocks_per_sm, which fails on a block that cannot run. Cached.
inline bool can_launch(const void* kernel, int threads, size_t smem) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int>, std::pair<int, size_t>> cache;  // -> (threads, smem) limits
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find({kernel, device});
  if (it == cache.end()) {
    cudaFuncAttributes attr{};
    check_cuda(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes");
    int optin = 0;
    check_cuda(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
    const size_t left = static_cast<size_t>(optin) > attr.sharedSizeBytes ? optin - attr.sharedSizeBytes : 0;
    it = cache.emplace(std::make_tuple(kernel, device), std::make_pair(attr.maxThreadsPerBlock, left)).first;
  }
  return threads <= it->second.first && smem <= it->second.second;
}

// One key of a launch override: name=value, value in [min, max], a power of two when pow2,
// a multiple of 32 when above 32 and warps.
struct ConfigKey {
  const char* name;
  int* value;
  int min, max;
  bool pow2 = false;
  bool warps = false;
};

// Parses "key=value,key=value" (the value of the environment variable `var`) into `keys`;
// anything else fails naming the variable, the key and what is allowed.
inline void parse_config(const char* var, const char* text, std::initializer_list<ConfigKey> keys) {
  const char* s = text;
  while (*s) {
    const char* eq = std::strchr(s, '=');
    const char* end = std::strchr(s, ',');
    if (!end) end = s + std::strlen(s);
    if (!eq || eq > end) fail(OPRT_STATUS_BAD_ATTRIBUTE, var, "=", text, ": '", std::string(s, end), "' is not key=value");
    const std::string key(s, eq), value(eq + 1, end);
    const ConfigKey* k = nullptr;
    std::string names;
    for (const ConfigKey& c : keys) {
      names += names.empty() ? c.name : std::string(", ") + c.name;
      if (key == c.name) k = &c;
    }
    if (!k) fail(OPRT_STATUS_BAD_ATTRIBUTE, var, "=", text, ": unknown key '", key, "' (keys: ", names, ")");
    char* stop = nullptr;
    const long v = std::strtol(value.c_str(), &stop, 10);
    const bool ok = !value.empty() && *stop == 0 && v >= k->min && v <= k->max && (!k->pow2 || (v & (v - 1)) == 0) &&
                    (!k->warps || (v <= 32 ? (v & (v - 1)) == 0 : v % 32 == 0));
    if (!ok)
      fail(OPRT_STATUS_BAD_ATTRIBUTE, var, "=", text, ": ", key, "=", value, " is not an integer in [", k->min, ", ",
           k->max, "]", k->pow2 ? ", a power of two" : "", k->warps ? ", a power of two up to 32 or a multiple of 32" : "");
    *k->value = static_cast<int>(v);
    s = *end ? end + 1 : end;
  }
}

}  // namespace oprt
