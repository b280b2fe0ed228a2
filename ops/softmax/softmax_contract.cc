// Validation and planning for softmax: the part of the contract every backend shares.
#include "softmax_descriptor.h"

using namespace oprt;

extern "C" OPRT_API oprt_status oprt_create_softmax_descriptor(oprt_softmax_descriptor** desc,
                                                               const oprt_tensor_view* out,
                                                               const oprt_tensor_view* in, int64_t dim) {
  return guard([&] {
    require_not_null(desc, "desc (output pointer)");
    *desc = nullptr;
    const Layout o = read_view(out, "out");
    const Layout i = read_view(in, "in");
    require_same_dtype(o, "out", i, "in");
    bool same = o.rank == i.rank;
    for (int k = 0; same && k < o.rank; ++k) same = o.shape[k] == i.shape[k];
    if (!same)
      fail(OPRT_STATUS_BAD_SHAPE, "out ", shape_string(o.rank, o.shape), " must have in's shape ",
           shape_string(i.rank, i.shape));
    const int d = normalize_dim(dim, i.rank, "dim");
    require_no_self_overlap(o, "out");
    int64_t out_strides[OPRT_MAX_RANK] = {};
    for (int k = 0; k < o.rank; ++k) out_strides[k] = o.strides[k];
    auto desc_obj = std::make_unique<SoftmaxDescriptor>();
    desc_obj->dtype = i.dtype;
    desc_obj->plan = make_row_plan(i, d, out_strides);
    desc_obj->workspace_bytes = softmax_workspace_bytes(*desc_obj);
    publish(desc, std::move(desc_obj));
  });
}

extern "C" OPRT_API oprt_status oprt_get_softmax_workspace_size(const oprt_softmax_descriptor* desc, size_t* size) {
  return workspace_size_of<SoftmaxDescriptor>(desc, size);
}

extern "C" OPRT_API oprt_status oprt_destroy_softmax_descriptor(oprt_softmax_descriptor* desc) {
  return destroy_handle<SoftmaxDescriptor>(desc);
}
