// vector_add on NVIDIA GPUs, first version: one grid-stride element-wise kernel;
// f16/bf16 add in f32 and round once, as torch does.
#include "elementwise_cuda.cuh"
#include "vector_add_descriptor.h"

using namespace oprt;

namespace {
template <class T>
struct AddElement {
  T* out;
  const T* a;
  const T* b;
  __device__ void operator()(const int64_t (&off)[3]) const {
    out[off[0]] = from_float<T>(to_float(a[off[1]]) + to_float(b[off[2]]));
  }
};
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_vector_add(const oprt_vector_add_descriptor* desc, void* workspace,
                                                        size_t workspace_size, void* out, const void* a,
                                                        const void* b, oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<VectorAddDescriptor>(desc, workspace, workspace_size);
    if (d.plan.numel == 0) return;
    require_buffers({{out, "out", true}, {a, "a", true}, {b, "b", true}});
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      launch_elementwise(d.plan, AddElement<T>{static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b)},
                         stream, "vector_add kernel");
    });
  });
}
