#include <atomic>

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
}  // namespace oprt
