#include "tensor_layout.h"

#include <algorithm>
#include <numeric>

namespace oprt {

const char* dtype_name(oprt_dtype dtype) {
  switch (dtype) {
    case OPRT_DTYPE_F32: return "f32";
    case OPRT_DTYPE_F16: return "f16";
    case OPRT_DTYPE_BF16: return "bf16";
  }
  return "unknown";
}

std::string shape_string(int rank, const int64_t* shape) {
  std::string s = "[";
  for (int d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

Layout read_view(const oprt_tensor_view* view, const char* name) {
  require_not_null(view, name);
  Layout l{};
  if (view->dtype != OPRT_DTYPE_F32 && view->dtype != OPRT_DTYPE_F16 && view->dtype != OPRT_DTYPE_BF16)
    fail(OPRT_STATUS_BAD_DTYPE, name, ": dtype code ", view->dtype, " is not f32 (0), f16 (1) or bf16 (2)");
  if (view->rank < 0 || view->rank > OPRT_MAX_RANK)
    fail(OPRT_STATUS_BAD_SHAPE, name, ": rank ", view->rank, " is outside 0..", OPRT_MAX_RANK);
  l.dtype = static_cast<oprt_dtype>(view->dtype);
  l.rank = view->rank;
  l.numel = 1;
  int64_t max_offset = 0;
  for (int d = 0; d < l.rank; ++d) {
    l.shape[d] = view->shape[d];
    l.strides[d] = view->strides[d];
    if (l.shape[d] < 0) fail(OPRT_STATUS_BAD_SHAPE, name, ": size ", l.shape[d], " of dim ", d, " is negative");
    if (l.strides[d] < 0)
      fail(OPRT_STATUS_BAD_STRIDES, name, ": stride ", l.strides[d], " of dim ", d, " is negative (not supported)");
    if (__builtin_mul_overflow(l.numel, l.shape[d], &l.numel))
      fail(OPRT_STATUS_BAD_SHAPE, name, ": element count of ", shape_string(l.rank, l.shape), " overflows int64");
  }
  if (l.numel > 0) {
    for (int d = 0; d < l.rank; ++d) {
      int64_t reach;
      if (__builtin_mul_overflow(l.shape[d] - 1, l.strides[d], &reach) ||
          __builtin_add_overflow(max_offset, reach, &max_offset))
        fail(OPRT_STATUS_BAD_STRIDES, name, ": offsets of strides ", shape_string(l.rank, l.strides),
             " overflow int64");
    }
  }
  return l;
}

void require_no_self_overlap(const Layout& out, const char* name) {
  if (out.numel <= 1) return;
  // Sort the dims that matter (size > 1) by stride; each must step past everything the
  // smaller-stride dims can reach, or two indices land on one element.
  int order[OPRT_MAX_RANK];
  int n = 0;
  for (int d = 0; d < out.rank; ++d)
    if (out.shape[d] > 1) order[n++] = d;
  std::sort(order, order + n, [&](int a, int b) { return out.strides[a] < out.strides[b]; });
  int64_t reach = 0;  // largest offset reachable with the dims seen so far
  for (int i = 0; i < n; ++i) {
    const int d = order[i];
    if (out.strides[d] <= reach)
      fail(OPRT_STATUS_BAD_STRIDES, name, ": strides ", shape_string(out.rank, out.strides), " for shape ",
           shape_string(out.rank, out.shape), " make elements overlap; an output needs distinct elements");
    reach += (out.shape[d] - 1) * out.strides[d];
  }
}

void require_same_dtype(const Layout& a, const char* a_name, const Layout& b, const char* b_name) {
  if (a.dtype != b.dtype)
    fail(OPRT_STATUS_BAD_DTYPE, a_name, " is ", dtype_name(a.dtype), " but ", b_name, " is ", dtype_name(b.dtype),
         "; they must match");
}

void broadcast_strides(const Layout& in, const char* name, const Layout& target,
                       int64_t (&strides)[OPRT_MAX_RANK]) {
  if (in.rank > target.rank)
    fail(OPRT_STATUS_BAD_SHAPE, name, " ", shape_string(in.rank, in.shape), " has more dims than the result ",
         shape_string(target.rank, target.shape));
  const int lead = target.rank - in.rank;
  for (int d = 0; d < target.rank; ++d) {
    if (d < lead) {
      strides[d] = 0;
      continue;
    }
    const int64_t size = in.shape[d - lead];
    if (size == target.shape[d]) {
      strides[d] = in.strides[d - lead];
    } else if (size == 1) {
      strides[d] = 0;
    } else {
      fail(OPRT_STATUS_BAD_SHAPE, name, " ", shape_string(in.rank, in.shape), " cannot broadcast to ",
           shape_string(target.rank, target.shape), " (dim ", d - lead, ")");
    }
  }
}

int normalize_dim(int64_t dim, int rank, const char* name) {
  const int64_t span = std::max(rank, 1);  // torch lets a 0-d tensor use dim 0 or -1
  if (dim < -span || dim >= span)
    fail(OPRT_STATUS_BAD_ATTRIBUTE, name, " ", dim, " is out of range for a tensor of rank ", rank,
         " (expected ", -span, " .. ", span - 1, ")");
  return static_cast<int>(dim < 0 ? dim + span : dim);
}

namespace {
// Drops size-1 dims and merges neighbours every operand is contiguous across.
// strides points at `count` arrays of OPRT_MAX_RANK. Returns the new rank.
int coalesce(int rank, int64_t* shape, int64_t (*strides)[OPRT_MAX_RANK], int count) {
  int n = 0;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] == 1) continue;
    if (n > 0) {
      bool mergeable = true;
      for (int k = 0; k < count; ++k) mergeable &= strides[k][n - 1] == strides[k][d] * shape[d];
      if (mergeable) {
        shape[n - 1] *= shape[d];
        for (int k = 0; k < count; ++k) strides[k][n - 1] = strides[k][d];
        continue;
      }
    }
    shape[n] = shape[d];
    for (int k = 0; k < count; ++k) strides[k][n] = strides[k][d];
    ++n;
  }
  return n;
}
}  // namespace

template <int N>
ElementwisePlan<N> make_elementwise_plan(const Layout& out,
                                         const int64_t (&in_strides)[N - 1][OPRT_MAX_RANK]) {
  ElementwisePlan<N> p{};
  p.numel = out.numel;
  std::copy(out.shape, out.shape + out.rank, p.shape);
  std::copy(out.strides, out.strides + out.rank, p.strides[0]);
  for (int k = 1; k < N; ++k) std::copy(in_strides[k - 1], in_strides[k - 1] + out.rank, p.strides[k]);
  p.rank = out.numel == 0 ? 0 : coalesce(out.rank, p.shape, p.strides, N);
  p.contiguous = true;
  if (p.rank > 1) p.contiguous = false;
  for (int k = 0; k < N && p.rank == 1; ++k) p.contiguous &= p.strides[k][0] == 1;
  return p;
}

template ElementwisePlan<2> make_elementwise_plan<2>(const Layout&, const int64_t (&)[1][OPRT_MAX_RANK]);
template ElementwisePlan<3> make_elementwise_plan<3>(const Layout&, const int64_t (&)[2][OPRT_MAX_RANK]);

RowPlan make_row_plan(const Layout& in, int dim, const int64_t (&out_strides)[OPRT_MAX_RANK]) {
  RowPlan p{};
  p.row_len = in.rank == 0 ? 1 : in.shape[dim];
  p.in_row_stride = in.rank == 0 ? 1 : in.strides[dim];
  p.out_row_stride = in.rank == 0 ? 1 : out_strides[dim];
  p.rows = 1;
  int64_t strides[2][OPRT_MAX_RANK];
  int n = 0;
  for (int d = 0; d < in.rank; ++d) {
    if (d == dim) continue;
    p.outer_shape[n] = in.shape[d];
    strides[0][n] = in.strides[d];
    strides[1][n] = out_strides[d];
    p.rows *= in.shape[d];
    ++n;
  }
  p.outer_rank = p.rows == 0 ? 0 : coalesce(n, p.outer_shape, strides, 2);
  std::copy(strides[0], strides[0] + p.outer_rank, p.in_outer_strides);
  std::copy(strides[1], strides[1] + p.outer_rank, p.out_outer_strides);
  return p;
}

}  // namespace oprt
