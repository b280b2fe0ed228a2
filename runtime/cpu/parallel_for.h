// Splitting CPU work over threads.
//
// parallel_for(n, grain, fn) calls fn(begin, end, worker) on disjoint ranges covering
// [0, n), at most cpu_threads() of them, each at least `grain` long so that small tensors
// stay on the calling thread (starting a thread costs ~10 us). `worker` is in
// [0, cpu_threads()) and unique per concurrent call, for indexing per-thread scratch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace oprt {

int cpu_threads();  // OPRT_NUM_THREADS, or the hardware's count

template <class F>
void parallel_for(int64_t n, int64_t grain, F&& fn) {
  if (n <= 0) return;
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(cpu_threads(), n / std::max<int64_t>(grain, 1)));
  if (chunks == 1) {
    fn(int64_t{0}, n, 0);
    return;
  }
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(chunks);
  auto run = [&](int64_t k) {
    try {
      fn(n * k / chunks, n * (k + 1) / chunks, static_cast<int>(k));
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  threads.reserve(chunks - 1);
  for (int64_t k = 1; k < chunks; ++k) threads.emplace_back(run, k);
  run(0);
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace oprt
