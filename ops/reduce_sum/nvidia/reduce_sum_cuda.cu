// reduce_sum on NVIDIA GPUs, first version, two strategies:
//  - rows contiguous (reducing the last dim): a block per row, threads stride along it and
//    combine with block_reduce;
//  - rows strided but neighbouring rows adjacent (reducing a leading dim): a thread per
//    output, so the threads of a warp read 32 adjacent elements at every step (coalesced)
//    instead of each block striding through memory alone.
#include "block_reduce.cuh"
#include "cuda_launch.cuh"
#include "reduce_sum_descriptor.h"

using namespace oprt;

namespace oprt {
size_t reduce_sum_workspace_bytes(const ReduceSumDescriptor&) { return 0; }
}  // namespace oprt

namespace {
constexpr int kThreads = 256;

template <class T>
__global__ void sum_row_per_block(RowPlan p, const T* x, T* y) {
  __shared__ float scratch[32];
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    float acc = 0.f;
    for (int64_t r = threadIdx.x; r < p.row_len; r += blockDim.x) acc += to_float(x[in_off + r * p.in_row_stride]);
    acc = block_reduce<Sum>(acc, scratch);
    if (threadIdx.x == 0) y[out_off] = from_float<T>(acc);
  }
}

template <class T>
__global__ void sum_row_per_thread(RowPlan p, const T* x, T* y) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < p.rows; row += step) {
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    float acc = 0.f;
    for (int64_t r = 0; r < p.row_len; ++r) acc += to_float(x[in_off + r * p.in_row_stride]);
    y[out_off] = from_float<T>(acc);
  }
}

bool neighbours_adjacent(const RowPlan& p) {
  return p.in_row_stride != 1 && p.outer_rank > 0 && p.in_outer_strides[p.outer_rank - 1] == 1;
}
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_reduce_sum(const oprt_reduce_sum_descriptor* desc, void* workspace,
                                                        size_t workspace_size, void* out, const void* in,
                                                        oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<ReduceSumDescriptor>(desc, workspace, workspace_size);
    if (d.plan.rows == 0) return;
    require_buffers({{out, "out", true}, {in, "in", d.plan.row_len > 0}});
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      const auto* x = static_cast<const T*>(in);
      auto* y = static_cast<T*>(out);
      const cudaStream_t s = as_cuda_stream(stream);
      if (neighbours_adjacent(d.plan)) {
        sum_row_per_thread<T><<<grid_for(d.plan.rows, kThreads), kThreads, 0, s>>>(d.plan, x, y);
      } else {
        sum_row_per_block<T><<<grid_for(d.plan.rows, 1, 32), kThreads, 0, s>>>(d.plan, x, y);
      }
      check_launch("reduce_sum kernel");
    });
  });
}
