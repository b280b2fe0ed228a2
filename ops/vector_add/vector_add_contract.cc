// Validation and planning for vector_add: the part of the contract every backend shares.
#include <algorithm>

#include "vector_add_descriptor.h"

using namespace oprt;

extern "C" OPRT_API oprt_status oprt_create_vector_add_descriptor(oprt_vector_add_descriptor** desc,
                                                                  const oprt_tensor_view* out,
                                                                  const oprt_tensor_view* a,
                                                                  const oprt_tensor_view* b) {
  return guard([&] {
    require_not_null(desc, "desc (output pointer)");
    *desc = nullptr;
    const Layout o = read_view(out, "out");
    const Layout la = read_view(a, "a");
    const Layout lb = read_view(b, "b");
    require_same_dtype(la, "a", lb, "b");
    require_same_dtype(o, "out", la, "a");
    // out must have exactly the broadcast shape: a larger out would need a and b to grow.
    const int rank = std::max(la.rank, lb.rank);
    if (o.rank != rank)
      fail(OPRT_STATUS_BAD_SHAPE, "out ", shape_string(o.rank, o.shape), " must have the broadcast rank ", rank,
           " of a ", shape_string(la.rank, la.shape), " and b ", shape_string(lb.rank, lb.shape));
    for (int d = 0; d < rank; ++d) {
      const int da = d - (rank - la.rank), db = d - (rank - lb.rank);
      const int64_t sa = da >= 0 ? la.shape[da] : 1, sb = db >= 0 ? lb.shape[db] : 1;
      const int64_t want = sa == 1 ? sb : sa;
      if (o.shape[d] != want)
        fail(OPRT_STATUS_BAD_SHAPE, "out ", shape_string(o.rank, o.shape), " is not the broadcast shape of a ",
             shape_string(la.rank, la.shape), " and b ", shape_string(lb.rank, lb.shape));
    }
    require_no_self_overlap(o, "out");
    int64_t in_strides[2][OPRT_MAX_RANK];
    broadcast_strides(la, "a", o, in_strides[0]);
    broadcast_strides(lb, "b", o, in_strides[1]);
    auto d = std::make_unique<VectorAddDescriptor>();
    d->dtype = o.dtype;
    d->plan = make_elementwise_plan<3>(o, in_strides);
    publish(desc, std::move(d));
  });
}

extern "C" OPRT_API oprt_status oprt_get_vector_add_workspace_size(const oprt_vector_add_descriptor* desc,
                                                                   size_t* size) {
  return workspace_size_of<VectorAddDescriptor>(desc, size);
}

extern "C" OPRT_API oprt_status oprt_destroy_vector_add_descriptor(oprt_vector_add_descriptor* desc) {
  return destroy_handle<VectorAddDescriptor>(desc);
}
