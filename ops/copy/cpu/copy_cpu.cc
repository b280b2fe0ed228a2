// copy on the CPU: one strided walk, converting through f32 when the dtypes differ.
#include "copy_descriptor.h"
#include "elementwise_cpu.h"
#include "half_float.h"

using namespace oprt;

extern "C" OPRT_API oprt_status oprt_execute_copy(const oprt_copy_descriptor* desc, void* workspace,
                                                  size_t workspace_size, void* out, const void* in, oprt_stream) {
  return guard([&] {
    const auto& d = begin_execute<CopyDescriptor>(desc, workspace, workspace_size);
    if (d.plan.numel == 0) return;
    require_buffers({{out, "out", true}, {in, "in", true}});
    dispatch_dtype(d.out_dtype, [&](auto out_type) {
      dispatch_dtype(d.in_dtype, [&](auto in_type) {
        using TO = typename decltype(out_type)::type;
        using TI = typename decltype(in_type)::type;
        auto* o = static_cast<TO*>(out);
        const auto* x = static_cast<const TI*>(in);
        for_each_element(d.plan, [&](const int64_t(&off)[2]) {
          if constexpr (std::is_same_v<TO, TI>) o[off[0]] = x[off[1]];
          else o[off[0]] = from_float<TO>(to_float(x[off[1]]));
        });
      });
    });
  });
}
