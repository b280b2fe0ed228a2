// Validation and planning for copy: the part of the contract every backend shares.
#include "copy_descriptor.h"

using namespace oprt;

extern "C" OPRT_API oprt_status oprt_create_copy_descriptor(oprt_copy_descriptor** desc, const oprt_tensor_view* out,
                                                            const oprt_tensor_view* in) {
  return guard([&] {
    require_not_null(desc, "desc (output pointer)");
    *desc = nullptr;
    const Layout o = read_view(out, "out");
    const Layout i = read_view(in, "in");
    require_no_self_overlap(o, "out");
    int64_t in_strides[1][OPRT_MAX_RANK];
    broadcast_strides(i, "in", o, in_strides[0]);
    auto d = std::make_unique<CopyDescriptor>();
    d->out_dtype = o.dtype;
    d->in_dtype = i.dtype;
    d->plan = make_elementwise_plan<2>(o, in_strides);
    publish(desc, std::move(d));
  });
}

extern "C" OPRT_API oprt_status oprt_get_copy_workspace_size(const oprt_copy_descriptor* desc, size_t* size) {
  return workspace_size_of<CopyDescriptor>(desc, size);
}

extern "C" OPRT_API oprt_status oprt_destroy_copy_descriptor(oprt_copy_descriptor* desc) {
  return destroy_handle<CopyDescriptor>(desc);
}
