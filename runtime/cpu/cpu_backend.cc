#include <cstdlib>
#include <thread>

#include "operator_runtime/oprt.h"
#include "parallel_for.h"

extern "C" OPRT_API const char* oprt_backend_name(void) { return "cpu"; }

namespace oprt {
int cpu_threads() {
  // Fixed once per process: workspace sizes computed at create() depend on it.
  static const int threads = [] {
    if (const char* env = std::getenv("OPRT_NUM_THREADS")) {
      const int n = std::atoi(env);
      if (n > 0) return n;
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }();
  return threads;
}
}  // namespace oprt
