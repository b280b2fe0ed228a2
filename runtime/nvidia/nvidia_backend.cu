#include "cuda_launch.cuh"

extern "C" OPRT_API const char* oprt_backend_name(void) { return "nvidia"; }

namespace oprt {
int grid_limit(int blocks_per_sm) {
  int device = 0, sms = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return sms * blocks_per_sm;
}
}  // namespace oprt
