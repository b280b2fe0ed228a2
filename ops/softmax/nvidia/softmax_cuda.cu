// softmax on NVIDIA GPUs, first version: a block per row, three passes over the row
// (max with NaN winning, sum of exp(x - max), scale), all in f32.
#include "block_reduce.cuh"
#include "cuda_launch.cuh"
#include "softmax_descriptor.h"

using namespace oprt;

namespace oprt {
size_t softmax_workspace_bytes(const SoftmaxDescriptor&) { return 0; }
}  // namespace oprt

namespace {
constexpr int kThreads = 256;

template <class T>
__global__ void softmax_row_per_block(RowPlan p, const T* x, T* y) {
  __shared__ float scratch[32];
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    int64_t in_off, out_off;
    p.row_offsets(row, in_off, out_off);
    const T* xr = x + in_off;
    float m = NanMax::identity();
    for (int64_t r = threadIdx.x; r < p.row_len; r += blockDim.x) m = NanMax::apply(m, to_float(xr[r * p.in_row_stride]));
    m = block_reduce<NanMax>(m, scratch);
    float sum = 0.f;
    for (int64_t r = threadIdx.x; r < p.row_len; r += blockDim.x) sum += __expf(to_float(xr[r * p.in_row_stride]) - m);
    sum = block_reduce<Sum>(sum, scratch);
    const float inv = 1.f / sum;
    for (int64_t r = threadIdx.x; r < p.row_len; r += blockDim.x)
      y[out_off + r * p.out_row_stride] = from_float<T>(__expf(to_float(xr[r * p.in_row_stride]) - m) * inv);
  }
}
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_softmax(const oprt_softmax_descriptor* desc, void* workspace,
                                                     size_t workspace_size, void* out, const void* in,
                                                     oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<SoftmaxDescriptor>(desc, workspace, workspace_size);
    if (d.plan.rows == 0 || d.plan.row_len == 0) return;
    require_buffers({{out, "out", true}, {in, "in", true}});
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      softmax_row_per_block<T><<<grid_for(d.plan.rows, 1, 32), kThreads, 0, as_cuda_stream(stream)>>>(
          d.plan, static_cast<const T*>(in), static_cast<T*>(out));
      check_launch("softmax kernel");
    });
  });
}
