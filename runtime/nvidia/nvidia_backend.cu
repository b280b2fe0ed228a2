#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda_launch.cuh"

extern "C" OPRT_API const char* oprt_backend_name(void) { return "nvidia"; }

namespace oprt {
int sm_count() {
  // Asked once per device: grids are sized on every launch, and the attribute query
  // would otherwise cost host time on each call.
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cached[kMaxDevices] = {};
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  if (device >= kMaxDevices) device = kMaxDevices - 1;
  int sms = cached[device].load(std::memory_order_relaxed);
  if (sms == 0) {
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    cached[device].store(sms, std::memory_order_relaxed);
  }
  return sms;
}

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

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
}  // namespace oprt
