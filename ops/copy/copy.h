/* The `copy` operator's C contract, identical for every backend library.
 *
 * Copies `in` into `out` (Tensor.copy_): `in` broadcasts to out's shape with any
 * strides; dtypes may differ (f32/f16/bf16, rounding to nearest even); `out` must not
 * overlap itself.
 */
#ifndef OPERATOR_RUNTIME_COPY_H
#define OPERATOR_RUNTIME_COPY_H

#include "operator_runtime/oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_copy_descriptor oprt_copy_descriptor;

OPRT_API oprt_status oprt_create_copy_descriptor(oprt_copy_descriptor** desc, const oprt_tensor_view* out,
                                                 const oprt_tensor_view* in);
OPRT_API oprt_status oprt_get_copy_workspace_size(const oprt_copy_descriptor* desc, size_t* size);
OPRT_API oprt_status oprt_execute_copy(const oprt_copy_descriptor* desc, void* workspace, size_t workspace_size,
                                       void* out, const void* in, oprt_stream stream);
OPRT_API oprt_status oprt_destroy_copy_descriptor(oprt_copy_descriptor* desc);

#ifdef __cplusplus
}
#endif
#endif
