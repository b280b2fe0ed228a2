// Validation and planning for reduce_sum: the part of the contract every backend shares.
#include "reduce_sum_descriptor.h"

using namespace oprt;

extern "C" OPRT_API oprt_status oprt_create_reduce_sum_descriptor(oprt_reduce_sum_descriptor** desc,
                                                                  const oprt_tensor_view* out,
                                                                  const oprt_tensor_view* in, int64_t dim,
                                                                  int32_t keepdim) {
  return guard([&] {
    require_not_null(desc, "desc (output pointer)");
    *desc = nullptr;
    const Layout o = read_view(out, "out");
    const Layout i = read_view(in, "in");
    require_same_dtype(o, "out", i, "in");
    if (keepdim != 0 && keepdim != 1) fail(OPRT_STATUS_BAD_ATTRIBUTE, "keepdim ", keepdim, " is not 0 or 1");
    const int d = normalize_dim(dim, i.rank, "dim");
    // The expected output shape: in's shape with dim dropped (or kept as 1).
    Layout want = i;
    want.rank = 0;
    for (int k = 0; k < i.rank; ++k) {
      if (k != d) want.shape[want.rank++] = i.shape[k];
      else if (keepdim) want.shape[want.rank++] = 1;
    }
    bool same = o.rank == want.rank;
    for (int k = 0; same && k < o.rank; ++k) same = o.shape[k] == want.shape[k];
    if (!same)
      fail(OPRT_STATUS_BAD_SHAPE, "out ", shape_string(o.rank, o.shape), " should be ",
           shape_string(want.rank, want.shape), " for in ", shape_string(i.rank, i.shape), ", dim ", dim,
           ", keepdim ", keepdim);
    require_no_self_overlap(o, "out");
    // out's stride for each of in's dims: 0 along the reduced dim.
    int64_t out_strides[OPRT_MAX_RANK] = {};
    for (int k = 0, j = 0; k < i.rank; ++k) {
      if (k == d) {
        out_strides[k] = 0;
        j += keepdim;
      } else {
        out_strides[k] = o.strides[j++];
      }
    }
    auto desc_obj = std::make_unique<ReduceSumDescriptor>();
    desc_obj->dtype = i.dtype;
    desc_obj->plan = make_row_plan(i, d, out_strides);
    desc_obj->plan.out_row_stride = 0;
    desc_obj->workspace_bytes = reduce_sum_workspace_bytes(*desc_obj);
    publish(desc, std::move(desc_obj));
  });
}

extern "C" OPRT_API oprt_status oprt_get_reduce_sum_workspace_size(const oprt_reduce_sum_descriptor* desc,
                                                                   size_t* size) {
  return workspace_size_of<ReduceSumDescriptor>(desc, size);
}

extern "C" OPRT_API oprt_status oprt_destroy_reduce_sum_descriptor(oprt_reduce_sum_descriptor* desc) {
  return destroy_handle<ReduceSumDescriptor>(desc);
}
