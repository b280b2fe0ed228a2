// Plain-data iteration plans, shared by the CPU (C++) and CUDA backends.
//
// A plan is what create() derives once from the tensor views: shapes with size-1 dims
// dropped and adjacent dims merged where every operand is contiguous across them
// ("coalescing"), so a contiguous tensor of any rank becomes one dim of stride 1.
// All indices are 64-bit: tensors past 2^31 elements are ordinary here.
#pragma once

#include <cstdint>

#include "operator_runtime/oprt.h"

#if defined(__CUDACC__)
#define OPRT_HD __host__ __device__ __forceinline__
#else
#define OPRT_HD inline
#endif

namespace oprt {

// Element-wise iteration over one output and N-1 inputs (operand 0 is the output).
template <int N>
struct ElementwisePlan {
  int rank;
  int64_t numel;
  int64_t shape[OPRT_MAX_RANK];
  int64_t strides[N][OPRT_MAX_RANK];
  bool contiguous;  // rank <= 1 and every operand has stride 1: a flat loop suffices

  // Offsets (in elements) of every operand for the linear index i, row-major over shape.
  OPRT_HD void offsets(int64_t i, int64_t (&off)[N]) const {
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t coord = i % shape[d];
      i /= shape[d];
      for (int k = 0; k < N; ++k) off[k] += coord * strides[k][d];
    }
  }
};

// Row-wise work (reductions, softmax): `rows` independent rows of `row_len` elements along
// the reduced dim; the remaining ("outer") dims locate each row's start in input and output.
struct RowPlan {
  int64_t rows;
  int64_t row_len;
  int64_t in_row_stride;   // stride of the reduced dim in the input
  int64_t out_row_stride;  // in the output (softmax); 0 for a reduction
  int outer_rank;
  int64_t outer_shape[OPRT_MAX_RANK];
  int64_t in_outer_strides[OPRT_MAX_RANK];
  int64_t out_outer_strides[OPRT_MAX_RANK];

  OPRT_HD void row_offsets(int64_t row, int64_t& in_off, int64_t& out_off) const {
    if (outer_rank == 1) {  // row < outer_shape[0]: no division (64-bit % and / cost
      in_off = row * in_outer_strides[0];  // more than a short row's whole sum on a GPU)
      out_off = row * out_outer_strides[0];
      return;
    }
    in_off = 0;
    out_off = 0;
    for (int d = outer_rank - 1; d >= 0; --d) {
      const int64_t coord = row % outer_shape[d];
      row /= outer_shape[d];
      in_off += coord * in_outer_strides[d];
      out_off += coord * out_outer_strides[d];
    }
  }

  // Reducing a leading dim: whether rows k*E .. k*E+E-1 lie side by side in memory (in, and
  // out too when `with_out`) with every row start a multiple of E elements from the base, so
  // a thread can read E neighbouring rows' elements at each step down the reduced dim as
  // one E-element pack (the bases' alignment is checked at execute).
  bool columns_pack(int E, bool with_out) const {
    const int last = outer_rank - 1;
    if (E == 1) return true;
    if (last < 0 || outer_shape[last] % E != 0 || in_outer_strides[last] != 1 || in_row_stride % E != 0) return false;
    if (with_out && (out_outer_strides[last] != 1 || out_row_stride % E != 0)) return false;
    for (int d = 0; d < last; ++d)
      if (in_outer_strides[d] % E != 0 || (with_out && out_outer_strides[d] % E != 0)) return false;
    return true;
  }
};

}  // namespace oprt
