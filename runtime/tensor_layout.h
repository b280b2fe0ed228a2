// Reading and checking tensor views, broadcasting, and building iteration plans.
// Everything here throws oprt::Error with a message naming the offending argument.
#pragma once

#include <string>

#include "errors.h"
#include "strided_index.h"

namespace oprt {

struct Layout {
  oprt_dtype dtype;
  int rank;
  int64_t shape[OPRT_MAX_RANK];
  int64_t strides[OPRT_MAX_RANK];
  int64_t numel;
};

const char* dtype_name(oprt_dtype dtype);
std::string shape_string(int rank, const int64_t* shape);

// Validates a view (not NULL, known dtype, rank 0..8, sizes and strides >= 0, every
// addressed offset fits in int64) and copies it. `name` is the argument's name.
Layout read_view(const oprt_tensor_view* view, const char* name);

// Refuses an output whose elements could share memory (zero or interleaved strides):
// parallel writes to it would race and the result would depend on the schedule.
void require_no_self_overlap(const Layout& out, const char* name);

void require_same_dtype(const Layout& a, const char* a_name, const Layout& b, const char* b_name);

// Strides of `in` read at `target`'s shape under torch broadcasting (missing and size-1
// dims repeat with stride 0). Throws BAD_SHAPE naming `name` when it cannot broadcast.
void broadcast_strides(const Layout& in, const char* name, const Layout& target,
                       int64_t (&strides)[OPRT_MAX_RANK]);

// Normalizes dim (negative counts from the end; a rank-0 tensor accepts 0 and -1).
int normalize_dim(int64_t dim, int rank, const char* name);

// Builds the coalesced plan for out (operand 0) and inputs already broadcast to out's shape.
template <int N>
ElementwisePlan<N> make_elementwise_plan(const Layout& out,
                                         const int64_t (&in_strides)[N - 1][OPRT_MAX_RANK]);

// Builds the row plan for reducing / normalizing `in` along `dim`. out_strides gives the
// output's stride for each of in's dims (0 along dim for a reduction).
RowPlan make_row_plan(const Layout& in, int dim, const int64_t (&out_strides)[OPRT_MAX_RANK]);

}  // namespace oprt
