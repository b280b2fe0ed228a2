#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda_launch.cuh"

extern "C" OPRT_API const char* oprt_backend_name(void) { return "nvidia"; }

namespace oprt {
namespace {
// A device attribute of the current device, asked once per device: grids are sized on every
// launch, and the attribute query would otherwise cost host time on each call.
template <cudaDeviceAttr Attr>
int cached_attribute() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cached[kMaxDevices] = {};  // 0: not asked yet (no attribute used here is 0)
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  if (device >= kMaxDevices) device = kMaxDevices - 1;
  int value = cached[device].load(std::memory_order_relaxed);
  if (value == 0) {
    check_cuda(cudaDeviceGetAttribute(&value, Attr, device), "cudaDeviceGetAttribute");
    cached[device].store(value, std::memory_order_relaxed);
  }
  return value;
}
}  // namespace

int sm_count() { return cached_attribute<cudaDevAttrMultiProcessorCount>(); }

int compute_capability_major() { return cached_attribute<cudaDevAttrComputeCapabilityMajor>(); }

int grid_limit(int blocks_per_sm) { return sm_count() * blocks_per_sm; }

void allow_dynamic_smem(const void* kernel, size_t smem) {
  // Set for any size: the default limit is 48 KiB minus the kernel's static shared
  // memory, so 48 KiB of dynamic memory beside a reduction's scratch already needs it.
  if (smem == 0) return;
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, size_t> allowed;
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  size_t& done = allowed[{kernel, device}];
  if (done >= smem) return;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
             "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  done = smem;
}

int resident_blocks_per_sm(const void* kernel, int threads, size_t smem) {
  allow_dynamic_smem(kernel, smem);
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, int, size_t>, int> cache;
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  const auto key = std::make_tuple(kernel, threads, device, smem);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  int blocks = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (blocks < 1)
    fail(OPRT_STATUS_DEVICE_ERROR, "a kernel cannot run with ", threads, " threads and ", smem,
         " bytes of shared memory per block");
  cache.emplace(key, blocks);
  return blocks;
}

int64_t resident_capacity(const void* kernel, int threads, size_t smem) {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  // Per thread, so no lock; a thread launches few distinct (kernel, block size) pairs, and
  // one not found is asked again (round-robin replacement), which is only slower. The
  // attribute allow_dynamic_smem sets on a miss stays set on the device for the hits.
  struct Entry {
    const void* kernel;
    int threads, device;
    size_t smem;
    int64_t capacity;
  };
  constexpr int kEntries = 16;
  thread_local Entry entries[kEntries] = {};
  thread_local int next = 0;
  for (const Entry& e : entries)
    if (e.kernel == kernel && e.threads == threads && e.device == device && e.smem == smem) return e.capacity;
  const int64_t capacity = int64_t{resident_blocks_per_sm(kernel, threads, smem)} * sm_count();
  entries[next] = {kernel, threads, device, smem, capacity};
  next = (next + 1) % kEntries;
  return capacity;
}

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
}  // namespace oprt
