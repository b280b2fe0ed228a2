// softmax on the CPU: per row, max (NaN wins, as in torch), sum of exp(x - max), scale.
//
// Each thread first gathers its row into an f32 scratch row in the workspace: the three
// passes then read contiguous f32 instead of re-reading (and re-converting) strided
// f16/bf16 input. Rows too long for a bounded workspace are streamed from the input.
#include <cmath>
#include <limits>

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
inline float nan_max(float m, float v) { return (v > m || std::isnan(v)) ? v : m; }

template <class T>
void softmax_rows(const RowPlan& p, const T* x, T* y, float* scratch) {
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(p.row_len, 1));
  parallel_for(p.rows, grain, [&](int64_t begin, int64_t end, int worker) {
    float* buf = scratch ? scratch + worker * p.row_len : nullptr;
    for (int64_t row = begin; row < end; ++row) {
      int64_t in_off, out_off;
      p.row_offsets(row, in_off, out_off);
      const T* xr = x + in_off;
      auto load = [&](int64_t r) { return buf ? buf[r] : to_float(xr[r * p.in_row_stride]); };
      if (buf)
        for (int64_t r = 0; r < p.row_len; ++r) buf[r] = to_float(xr[r * p.in_row_stride]);
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t r = 0; r < p.row_len; ++r) m = nan_max(m, load(r));
      float sum = 0.f;
      for (int64_t r = 0; r < p.row_len; ++r) {
        const float e = std::exp(load(r) - m);
        if (buf) buf[r] = e;
        sum += e;
      }
      const float inv = 1.f / sum;
      for (int64_t r = 0; r < p.row_len; ++r) {
        const float e = buf ? buf[r] : std::exp(load(r) - m);
        y[out_off + r * p.out_row_stride] = from_float<T>(e * inv);
      }
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
