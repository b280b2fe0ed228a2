// The CPU's long sum: terms added in f32 in chunks, the chunk sums carried in f64.
// Shared by reduce_sum (the sum is the output) and softmax (the sum of a row's exps).
//
// Why: a single f32 accumulator stops growing once it is 2^24 times larger than a term,
// which a long row reaches (2^31 halves summed in f32 stall at 2^26; a 2^22-long row of
// randn * 5 was 0.14% off), and the f32 error grows with the terms one accumulator adds.
// Within a chunk kSumLanes independent f32 partials take every kSumLanes-th term: a sum
// into one accumulator is a serial chain the compiler may not reorder (no -ffast-math),
// the lanes are a loop it vectorizes. The tail of a chunk (fewer than kSumLanes terms)
// goes to lane 0. An f64 add per chunk costs nothing measurable.
//
// The caller picks the chunk (accuracy against torch's pairwise sum vs the cost of the f64
// adds) and passes term(r), the r-th term as a float. It is always inlined: softmax calls it
// from a function compiled twice (OPRT_EXP_CLONES, SSE2 and AVX2 + FMA), and only an inlined
// copy is compiled for each clone; an out-of-line one would run SSE2 code in the AVX2 clone.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__GNUC__)
#define OPRT_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define OPRT_ALWAYS_INLINE inline
#endif

namespace oprt {

constexpr int kSumLanes = 8;

template <int64_t kChunk, class Term>
OPRT_ALWAYS_INLINE double chunked_sum(int64_t n, const Term& term) {
  static_assert(kChunk >= kSumLanes && kChunk % kSumLanes == 0, "a chunk holds whole rounds of lanes");
  double total = 0.0;
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t end = std::min(n, start + kChunk);
    float lanes[kSumLanes] = {};
    int64_t r = start;
    for (; r + kSumLanes <= end; r += kSumLanes)
      for (int l = 0; l < kSumLanes; ++l) lanes[l] += term(r + l);
    for (; r < end; ++r) lanes[0] += term(r);
    float s = 0.f;
    for (float v : lanes) s += v;
    total += s;
  }
  return total;
}

}  // namespace oprt
