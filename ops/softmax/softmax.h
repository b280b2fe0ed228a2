/* The `softmax` operator's C contract, identical for every backend library.
 *
 * out = softmax(in, dim), max-subtracted and accumulated in f32; out has in's shape
 * and dtype. Rows holding -inf, +inf or NaN give torch's results.
 */
#ifndef OPERATOR_RUNTIME_SOFTMAX_H
#define OPERATOR_RUNTIME_SOFTMAX_H

#include "operator_runtime/oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_softmax_descriptor oprt_softmax_descriptor;

OPRT_API oprt_status oprt_create_softmax_descriptor(oprt_softmax_descriptor** desc, const oprt_tensor_view* out,
                                                 const oprt_tensor_view* in, int64_t dim);
OPRT_API oprt_status oprt_get_softmax_workspace_size(const oprt_softmax_descriptor* desc, size_t* size);
OPRT_API oprt_status oprt_execute_softmax(const oprt_softmax_descriptor* desc, void* workspace, size_t workspace_size,
                                       void* out, const void* in, oprt_stream stream);
OPRT_API oprt_status oprt_destroy_softmax_descriptor(oprt_softmax_descriptor* desc);

#ifdef __cplusplus
}
#endif
#endif
