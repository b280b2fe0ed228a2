/* The `reduce_sum` operator's C contract, identical for every backend library.
 *
 * out = in.sum(dim, keepdim) with f32 accumulation; out has in's dtype. dim may be
 * negative; keepdim is 0 or 1. An empty reduced dim gives zeros.
 */
#ifndef OPERATOR_RUNTIME_REDUCE_SUM_H
#define OPERATOR_RUNTIME_REDUCE_SUM_H

#include "operator_runtime/oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_reduce_sum_descriptor oprt_reduce_sum_descriptor;

OPRT_API oprt_status oprt_create_reduce_sum_descriptor(oprt_reduce_sum_descriptor** desc, const oprt_tensor_view* out,
                                                 const oprt_tensor_view* in, int64_t dim, int32_t keepdim);
OPRT_API oprt_status oprt_get_reduce_sum_workspace_size(const oprt_reduce_sum_descriptor* desc, size_t* size);
OPRT_API oprt_status oprt_execute_reduce_sum(const oprt_reduce_sum_descriptor* desc, void* workspace, size_t workspace_size,
                                       void* out, const void* in, oprt_stream stream);
OPRT_API oprt_status oprt_destroy_reduce_sum_descriptor(oprt_reduce_sum_descriptor* desc);

#ifdef __cplusplus
}
#endif
#endif
