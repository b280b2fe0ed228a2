// Validation and planning for matmul: the part of the contract every backend shares.
#include <algorithm>

#include "matmul_descriptor.h"

using namespace oprt;

namespace {
void require_matrix_rank(const Layout& t, const char* name) {
  if (t.rank != 2 && t.rank != 3)
    fail(OPRT_STATUS_BAD_SHAPE, name, " ", shape_string(t.rank, t.shape), " has rank ", t.rank,
         "; matmul takes 2-d (M, K) / (K, N) or batched 3-d operands");
}

// The operand's stride over the batch: 0 when it is 2-d or has a batch of 1 (it repeats).
int64_t batch_stride(const Layout& t) { return t.rank == 3 && t.shape[0] != 1 ? t.strides[0] : 0; }
}  // namespace

extern "C" OPRT_API oprt_status oprt_create_matmul_descriptor(oprt_matmul_descriptor** desc,
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
    require_matrix_rank(la, "a");
    require_matrix_rank(lb, "b");
    const int ra = la.rank, rb = lb.rank;
    const int64_t m = la.shape[ra - 2], k = la.shape[ra - 1], n = lb.shape[rb - 1];
    if (lb.shape[rb - 2] != k)
      fail(OPRT_STATUS_BAD_SHAPE, "a ", shape_string(ra, la.shape), " and b ", shape_string(rb, lb.shape),
           " do not multiply: a's last dim (K=", k, ") must equal b's second-to-last (", lb.shape[rb - 2], ")");
    const int64_t batch_a = ra == 3 ? la.shape[0] : 1, batch_b = rb == 3 ? lb.shape[0] : 1;
    if (batch_a != batch_b && batch_a != 1 && batch_b != 1)
      fail(OPRT_STATUS_BAD_SHAPE, "a ", shape_string(ra, la.shape), " and b ", shape_string(rb, lb.shape),
           " have batches ", batch_a, " and ", batch_b, " that do not broadcast");
    const int rank = std::max(ra, rb);
    const int64_t batch = batch_a == 1 ? batch_b : batch_a;
    const int64_t want[3] = {batch, m, n};
    bool same = o.rank == rank;
    for (int d = 0; same && d < rank; ++d) same = o.shape[d] == want[3 - rank + d];
    if (!same)
      fail(OPRT_STATUS_BAD_SHAPE, "out ", shape_string(o.rank, o.shape), " must have the shape ",
           shape_string(rank, want + 3 - rank), " of a ", shape_string(ra, la.shape), " @ b ",
           shape_string(rb, lb.shape));
    require_no_self_overlap(o, "out");
    MatmulPlan p;
    p.batch = batch, p.m = m, p.n = n, p.k = k;
    p.a_batch = batch_stride(la), p.a_m = la.strides[ra - 2], p.a_k = la.strides[ra - 1];
    p.b_batch = batch_stride(lb), p.b_k = lb.strides[rb - 2], p.b_n = lb.strides[rb - 1];
    p.o_batch = rank == 3 ? o.strides[0] : 0, p.o_m = o.strides[rank - 2], p.o_n = o.strides[rank - 1];
    auto d = std::make_unique<MatmulDescriptor>();
    d->dtype = o.dtype;
    d->plan = p;
    d->workspace_bytes = matmul_workspace_bytes(*d);
    publish(desc, std::move(d));
  });
}

extern "C" OPRT_API oprt_status oprt_get_matmul_workspace_size(const oprt_matmul_descriptor* desc, size_t* size) {
  return workspace_size_of<MatmulDescriptor>(desc, size);
}

extern "C" OPRT_API oprt_status oprt_destroy_matmul_descriptor(oprt_matmul_descriptor* desc) {
  return destroy_handle<MatmulDescriptor>(desc);
}
