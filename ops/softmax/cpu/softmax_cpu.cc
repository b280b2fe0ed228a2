// softmax on the CPU: per row, max, sum of exp(x - max), scale (a NaN anywhere in a row makes
// the whole row NaN, as in torch).
// exp is expf_vec (expf_vec.h), not std::exp: a scalar library call per element was ~6 ns,
// 4.7x torch's whole softmax at 64x64.
//
// Each thread first gathers its row into an f32 scratch row in the workspace: the three
// passes then read contiguous f32 instead of re-reading (and re-converting) strided
// f16/bf16 input. Rows too long for a bounded workspace are streamed from the input.
#include <cmath>
#include <limits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "chunked_sum.h"
#include "expf_vec.h"
#include "half_float.h"
#include "parallel_for.h"
#include "softmax_descriptor.h"

using namespace oprt;

namespace {
constexpr int64_t kMaxScratchRow = int64_t{1} << 22;  // f32 elements per thread: 16 MiB
bool uses_scratch(const RowPlan& p) { return p.row_len <= kMaxScratchRow; }
}  // namespace

namespace oprt {
size_t softmax_workspace_bytes(SoftmaxDescriptor& d) {
  if (d.plan.rows == 0 || d.plan.row_len == 0 || !uses_scratch(d.plan)) return 0;
  const int64_t rows_at_once = std::min<int64_t>(d.plan.rows, cpu_threads());
  return static_cast<size_t>(rows_at_once * d.plan.row_len) * sizeof(float);
}
}  // namespace oprt

namespace {
// Row passes over the f32 scratch row, each a loop the compiler vectorizes (SSE2 at -O3,
// no -ffast-math), except the max: a max or sum into one accumulator is a serial chain GCC
// may not reorder, so the sum keeps independent partials (chunked_sum's lanes) and the max
// is written with SSE (baseline on x86-64), GCC vectorizing no form of it.

// The row's largest value, NaN skipped: a NaN makes the sum of exps NaN, and with it every
// output of the row, which is torch's result (max itself need not propagate it).
inline float max_step(float m, float v) { return v > m ? v : m; }

float row_max(const float* v, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  int64_t r = 0;
#if defined(__SSE2__)
  __m128 a = _mm_set1_ps(m), b = a;
  for (; r + 8 <= n; r += 8) {  // _mm_max_ps(x, acc) is acc when x is NaN
    a = _mm_max_ps(_mm_loadu_ps(v + r), a);
    b = _mm_max_ps(_mm_loadu_ps(v + r + 4), b);
  }
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, _mm_max_ps(a, b));
  for (float l : lanes) m = max_step(m, l);
#endif
  for (; r < n; ++r) m = max_step(m, v[r]);
  return m;
}

// Sums are chunked_sum's (chunked_sum.h: f32 lanes over chunks of kChunk, an f64 total).
constexpr int64_t kChunk = 1024;

// v[r] = exp(v[r] - m); returns their sum. (Most of a softmax's time: cloned for AVX2 + FMA,
// chunked_sum inlined into each clone.)
OPRT_EXP_CLONES float exp_shifted_sum(float* v, int64_t n, float m) {
  for (int64_t r = 0; r < n; ++r) v[r] = expf_vec(v[r] - m);
  return static_cast<float>(chunked_sum<kChunk>(n, [v](int64_t r) { return v[r]; }));
}

template <class T>
void softmax_rows(const RowPlan& p, const T* x, T* y, float* scratch) {
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(p.row_len, 1));
  const int64_t n = p.row_len, in_step = p.in_row_stride, out_step = p.out_row_stride;
  parallel_for(p.rows, grain, [&](int64_t begin, int64_t end, int worker) {
    float* buf = scratch ? scratch + worker * n : nullptr;
    for (int64_t row = begin; row < end; ++row) {
      int64_t in_off, out_off;
      p.row_offsets(row, in_off, out_off);
      const T* xr = x + in_off;
      T* yr = y + out_off;
      if (buf) {  // gather, three vectorized passes, scatter; unit strides split out so they vectorize
        if (in_step == 1)
          for (int64_t r = 0; r < n; ++r) buf[r] = to_float(xr[r]);
        else
          for (int64_t r = 0; r < n; ++r) buf[r] = to_float(xr[r * in_step]);
        const float inv = 1.f / exp_shifted_sum(buf, n, row_max(buf, n));
        if (out_step == 1)
          for (int64_t r = 0; r < n; ++r) yr[r] = from_float<T>(buf[r] * inv);
        else
          for (int64_t r = 0; r < n; ++r) yr[r * out_step] = from_float<T>(buf[r] * inv);
        continue;
      }
      // rows too long for the scratch: streamed from the input, exp computed twice
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t r = 0; r < n; ++r) m = max_step(m, to_float(xr[r * in_step]));
      double total = 0.0;
      for (int64_t start = 0; start < n; start += kChunk) {
        float sum = 0.f;
        for (int64_t r = start; r < std::min(n, start + kChunk); ++r) sum += expf_vec(to_float(xr[r * in_step]) - m);
        total += sum;
      }
      const float inv = 1.f / static_cast<float>(total);
      for (int64_t r = 0; r < n; ++r) yr[r * out_step] = from_float<T>(expf_vec(to_float(xr[r * in_step]) - m) * inv);
    }
  });
}
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_softmax(const oprt_softmax_descriptor* desc, void* workspace,
                                                     size_t workspace_size, void* out, const void* in,
                                                     oprt_stream) {
  return guard([&] {
    const auto& d = begin_execute<SoftmaxDescriptor>(desc, workspace, workspace_size);
    if (d.plan.rows == 0 || d.plan.row_len == 0) return;
    require_buffers({{out, "out", true}, {in, "in", true}});
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      softmax_rows(d.plan, static_cast<const T*>(in), static_cast<T*>(out),
                   d.workspace_bytes ? static_cast<float*>(workspace) : nullptr);
    });
  });
}
