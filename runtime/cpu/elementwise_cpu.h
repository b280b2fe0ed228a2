// Walking an ElementwisePlan on the CPU: threads take contiguous ranges of the linear
// index; inside a range an odometer steps the coordinates, so no division per element.
#pragma once

#include "parallel_for.h"
#include "strided_index.h"

namespace oprt {

constexpr int64_t kElementwiseGrain = 1 << 16;  // elements per thread, at least

// fn(const int64_t (&off)[N]) handles one element at the given operand offsets.
template <int N, class F>
void for_each_element(const ElementwisePlan<N>& p, F&& fn) {
  parallel_for(p.numel, kElementwiseGrain, [&](int64_t begin, int64_t end, int) {
    int64_t off[N];
    if (p.contiguous) {
      for (int64_t i = begin; i < end; ++i) {
        for (int k = 0; k < N; ++k) off[k] = i;
        fn(off);
      }
      return;
    }
    int64_t coord[OPRT_MAX_RANK];
    int64_t rest = begin;
    for (int d = p.rank - 1; d >= 0; --d) {
      coord[d] = rest % p.shape[d];
      rest /= p.shape[d];
    }
    p.offsets(begin, off);
    for (int64_t i = begin; i < end; ++i) {
      fn(off);
      for (int d = p.rank - 1; d >= 0; --d) {  // advance the odometer by one element
        for (int k = 0; k < N; ++k) off[k] += p.strides[k][d];
        if (++coord[d] < p.shape[d]) break;
        for (int k = 0; k < N; ++k) off[k] -= p.strides[k][d] * p.shape[d];
        coord[d] = 0;
      }
    }
  });
}

}  // namespace oprt
