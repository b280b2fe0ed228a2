// Validation and planning for scaled_dot_product_attention: the part of the contract every backend shares.
#include <cmath>
#include <utility>

#include "scaled_dot_product_attention_descriptor.h"

using namespace oprt;

namespace {
// Dims from the end: -1 features, -2 sequence, -3 heads (absent in a 2-d operand: one head).
int64_t dim_from_end(const Layout& t, int k) { return t.rank >= k ? t.shape[t.rank - k] : 1; }
int64_t stride_from_end(const Layout& t, int k) { return t.rank >= k ? t.strides[t.rank - k] : 0; }

// The operand's strides over heads (0 in a 2-d operand), sequence and features.
void plan_inner(AttentionOperand& a, const Layout& t) {
  a.head = stride_from_end(t, 3), a.seq = stride_from_end(t, 2), a.dim = stride_from_end(t, 1);
}

// The batch dims (all but the last three), size-1 dims dropped, adjacent dims merged where every
// operand steps over both as one.
void plan_batch(AttentionPlan& p, const Layout* t[4]) {
  AttentionOperand* ops[4] = {&p.q, &p.k, &p.v, &p.o};
  const int dims = std::max(t[0]->rank - 3, 0);
  p.batch = 1;
  p.batch_rank = 0;
  for (int d = 0; d < dims; ++d) {
    const int64_t size = t[0]->shape[d];
    p.batch *= size;
    if (size == 1) continue;
    const int r = p.batch_rank;
    bool merge = r > 0;
    for (int i = 0; merge && i < 4; ++i) merge = ops[i]->batch[r - 1] == t[i]->strides[d] * size;
    if (merge) {
      p.batch_shape[r - 1] *= size;
      for (int i = 0; i < 4; ++i) ops[i]->batch[r - 1] = t[i]->strides[d];
    } else {
      p.batch_shape[r] = size;
      for (int i = 0; i < 4; ++i) ops[i]->batch[r] = t[i]->strides[d];
      p.batch_rank = r + 1;
    }
  }
}
}  // namespace

extern "C" OPRT_API oprt_status oprt_create_scaled_dot_product_attention_descriptor(
    oprt_scaled_dot_product_attention_descriptor** desc, const oprt_tensor_view* out, const oprt_tensor_view* query,
    const oprt_tensor_view* key, const oprt_tensor_view* value, int32_t is_causal, double scale,
    int32_t enable_gqa) {
  return guard([&] {
    require_not_null(desc, "desc (output pointer)");
    *desc = nullptr;
    const Layout o = read_view(out, "out");
    const Layout q = read_view(query, "query");
    const Layout k = read_view(key, "key");
    const Layout v = read_view(value, "value");
    require_same_dtype(k, "key", q, "query");
    require_same_dtype(v, "value", q, "query");
    require_same_dtype(o, "out", q, "query");
    if (q.rank < 2)
      fail(OPRT_STATUS_BAD_SHAPE, "query ", shape_string(q.rank, q.shape), " has rank ", q.rank,
           "; attention takes (..., heads, sequence, features) operands of rank 2 or more");
    for (const auto& [t, name] : {std::pair{&k, "key"}, std::pair{&v, "value"}})
      if (t->rank != q.rank)
        fail(OPRT_STATUS_BAD_SHAPE, name, " ", shape_string(t->rank, t->shape), " has rank ", t->rank, " but query ",
             shape_string(q.rank, q.shape), " has rank ", q.rank, "; they must match");
    for (int d = 0; d < q.rank - 3; ++d)
      for (const auto& [t, name] : {std::pair{&k, "key"}, std::pair{&v, "value"}})
        if (t->shape[d] != q.shape[d])
          fail(OPRT_STATUS_BAD_SHAPE, name, " ", shape_string(t->rank, t->shape), " and query ",
               shape_string(q.rank, q.shape), " have different batch dims (dim ", d, ": ", t->shape[d], " and ",
               q.shape[d], ")");
    if (is_causal != 0 && is_causal != 1)
      fail(OPRT_STATUS_BAD_ATTRIBUTE, "is_causal ", is_causal, " must be 0 or 1");
    if (enable_gqa != 0 && enable_gqa != 1)
      fail(OPRT_STATUS_BAD_ATTRIBUTE, "enable_gqa ", enable_gqa, " must be 0 or 1");
    if (!std::isfinite(scale)) fail(OPRT_STATUS_BAD_ATTRIBUTE, "scale must be finite");
    const int64_t heads = dim_from_end(q, 3), kv_heads = dim_from_end(k, 3);
    if (dim_from_end(v, 3) != kv_heads)
      fail(OPRT_STATUS_BAD_SHAPE, "value has ", dim_from_end(v, 3), " heads (dim -3) but key has ", kv_heads,
           "; they must match");
    if (!enable_gqa && kv_heads != heads)
      fail(OPRT_STATUS_BAD_SHAPE, "key has ", kv_heads, " heads (dim -3) but query has ", heads,
           "; they must match (enable_gqa lets query's heads be a multiple of key's)");
    if (enable_gqa && (kv_heads == 0 ? heads != 0 : heads % kv_heads != 0))
      fail(OPRT_STATUS_BAD_SHAPE, "enable_gqa: query's ", heads, " heads (dim -3) are not a multiple of key's ",
           kv_heads);
    const int64_t sq = dim_from_end(q, 2), sk = dim_from_end(k, 2), d = dim_from_end(q, 1);
    const int64_t dv = dim_from_end(v, 1);
    if (dim_from_end(k, 1) != d)
      fail(OPRT_STATUS_BAD_SHAPE, "key's last dim (", dim_from_end(k, 1), ") must equal query's (", d,
           "): the head dim of query @ key^T");
    if (dim_from_end(v, 2) != sk)
      fail(OPRT_STATUS_BAD_SHAPE, "value's sequence length (dim -2: ", dim_from_end(v, 2), ") must equal key's (",
           sk, ")");
    int64_t want[OPRT_MAX_RANK];
    for (int i = 0; i < q.rank; ++i) want[i] = q.shape[i];
    want[q.rank - 1] = dv;
    bool same = o.rank == q.rank;
    for (int i = 0; same && i < q.rank; ++i) same = o.shape[i] == want[i];
    if (!same)
      fail(OPRT_STATUS_BAD_SHAPE, "out ", shape_string(o.rank, o.shape), " must have the shape ",
           shape_string(q.rank, want), " (query's with value's last dim)");
    require_no_self_overlap(o, "out");
    AttentionPlan p;
    const Layout* views[4] = {&q, &k, &v, &o};
    plan_batch(p, views);
    p.heads = heads, p.kv_heads = kv_heads, p.group = kv_heads ? heads / kv_heads : 1;
    p.sq = sq, p.sk = sk, p.d = d, p.dv = dv;
    plan_inner(p.q, q), plan_inner(p.k, k), plan_inner(p.v, v), plan_inner(p.o, o);
    p.causal = is_causal;
    p.scale = static_cast<float>(scale);
    auto desc_obj = std::make_unique<AttentionDescriptor>();
    desc_obj->dtype = q.dtype;
    desc_obj->plan = p;
    desc_obj->workspace_bytes = scaled_dot_product_attention_workspace_bytes(*desc_obj);
    publish(desc, std::move(desc_obj));
  });
}

extern "C" OPRT_API oprt_status oprt_get_scaled_dot_product_attention_workspace_size(
    const oprt_scaled_dot_product_attention_descriptor* desc, size_t* size) {
  return workspace_size_of<AttentionDescriptor>(desc, size);
}

extern "C" OPRT_API oprt_status oprt_destroy_scaled_dot_product_attention_descriptor(
    oprt_scaled_dot_product_attention_descriptor* desc) {
  return destroy_handle<AttentionDescriptor>(desc);
}
