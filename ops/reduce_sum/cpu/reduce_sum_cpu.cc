// reduce_sum on the CPU.
//
// Rows are summed in f32. When a row's elements are far apart (reducing a non-last dim)
// but neighbouring rows sit next to each other, a tile of neighbouring rows is summed
// together, r outer and the tile inner, so every cache line fetched is used in full
// instead of striding through memory once per output element.
#include <vector>

#include "chunked_sum.h"
#include "half_float.h"
#include "parallel_for.h"
#include "reduce_sum_descriptor.h"

using namespace oprt;

namespace oprt {
size_t reduce_sum_workspace_bytes(ReduceSumDescriptor&) { return 0; }
}  // namespace oprt

namespace {
constexpr int64_t kTile = 64;   // neighbouring rows summed together
// Rows are summed by chunked_sum (chunked_sum.h: f32 lanes, an f64 total). Its chunk is short
// here: the f32 error grows with the terms one accumulator adds (kChunk / kSumLanes in a row,
// kColumnChunk down a column), and with 4096 a 100003-long column was 7x less accurate than
// torch's pairwise ("cascade") sum.
constexpr int64_t kChunk = 256;
constexpr int64_t kColumnChunk = 64;  // down a column one accumulator adds every term: chunk it finer

template <class T>
double sum_row(const T* x, int64_t n, int64_t stride) {
  return chunked_sum<kChunk>(n, [x, stride](int64_t r) { return to_float(x[r * stride]); });
}

template <class T>
void reduce_rows(const RowPlan& p, const T* x, T* out) {
  const int inner = p.outer_rank - 1;  // the innermost outer dim: neighbouring rows
  const bool tiled = p.row_len > 1 && p.in_row_stride != 1 && inner >= 0 &&
                     p.in_outer_strides[inner] < p.in_row_stride;
  const int64_t run = tiled ? p.outer_shape[inner] : 1;  // rows per innermost run
  const int64_t tiles_per_run = (run + kTile - 1) / kTile;
  const int64_t tiles = tiled ? p.rows / run * tiles_per_run : p.rows;
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, p.row_len * (tiled ? kTile : 1)));
  parallel_for(tiles, grain, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t in_off, out_off;
      if (!tiled) {
        p.row_offsets(t, in_off, out_off);
        out[out_off] = from_float<T>(static_cast<float>(sum_row(x + in_off, p.row_len, p.in_row_stride)));
        continue;
      }
      const int64_t first = t / tiles_per_run * run + t % tiles_per_run * kTile;
      const int64_t count = std::min(kTile, run - t % tiles_per_run * kTile);
      p.row_offsets(first, in_off, out_off);
      double total[kTile] = {};
      const int64_t step = p.in_outer_strides[inner];
      for (int64_t start = 0; start < p.row_len; start += kColumnChunk) {
        float acc[kTile] = {};
        for (int64_t r = start; r < std::min(p.row_len, start + kColumnChunk); ++r) {
          const T* row = x + in_off + r * p.in_row_stride;
          for (int64_t j = 0; j < count; ++j) acc[j] += to_float(row[j * step]);
        }
        for (int64_t j = 0; j < count; ++j) total[j] += acc[j];
      }
      for (int64_t j = 0; j < count; ++j)
        out[out_off + j * p.out_outer_strides[inner]] = from_float<T>(static_cast<float>(total[j]));
    }
  });
}
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_reduce_sum(const oprt_reduce_sum_descriptor* desc, void* workspace,
                                                        size_t workspace_size, void* out, const void* in,
                                                        oprt_stream) {
  return guard([&] {
    const auto& d = begin_execute<ReduceSumDescriptor>(desc, workspace, workspace_size);
    if (d.plan.rows == 0) return;
    require_buffers({{out, "out", true}, {in, "in", d.plan.row_len > 0}});
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      reduce_rows(d.plan, static_cast<const T*>(in), static_cast<T*>(out));
    });
  });
}
