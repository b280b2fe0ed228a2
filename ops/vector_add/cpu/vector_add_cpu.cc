// vector_add on the CPU: one strided walk; f16/bf16 add in f32 and round once, as torch does.
#include "elementwise_cpu.h"
#include "half_float.h"
#include "vector_add_descriptor.h"

using namespace oprt;

extern "C" OPRT_API oprt_status oprt_execute_vector_add(const oprt_vector_add_descriptor* desc, void* workspace,
                                                        size_t workspace_size, void* out, const void* a,
                                                        const void* b, oprt_stream) {
  return guard([&] {
    const auto& d = begin_execute<VectorAddDescriptor>(desc, workspace, workspace_size);
    if (d.plan.numel == 0) return;
    require_buffers({{out, "out", true}, {a, "a", true}, {b, "b", true}});
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      auto* o = static_cast<T*>(out);
      const auto* x = static_cast<const T*>(a);
      const auto* y = static_cast<const T*>(b);
      for_each_element(d.plan, [&](const int64_t(&off)[3]) {
        o[off[0]] = from_float<T>(to_float(x[off[1]]) + to_float(y[off[2]]));
      });
    });
  });
}
