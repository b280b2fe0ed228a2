/* The `vector_add` operator's C contract, identical for every backend library.
 *
 * out = a + b with torch broadcasting, any rank and strides; a, b and out share a
 * dtype; out has the broadcast shape and must not overlap itself.
 */
#ifndef OPERATOR_RUNTIME_VECTOR_ADD_H
#define OPERATOR_RUNTIME_VECTOR_ADD_H

#include "operator_runtime/oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_vector_add_descriptor oprt_vector_add_descriptor;

OPRT_API oprt_status oprt_create_vector_add_descriptor(oprt_vector_add_descriptor** desc, const oprt_tensor_view* out,
                                                 const oprt_tensor_view* a, const oprt_tensor_view* b);
OPRT_API oprt_status oprt_get_vector_add_workspace_size(const oprt_vector_add_descriptor* desc, size_t* size);
OPRT_API oprt_status oprt_execute_vector_add(const oprt_vector_add_descriptor* desc, void* workspace, size_t workspace_size,
                                       void* out, const void* a, const void* b, oprt_stream stream);
OPRT_API oprt_status oprt_destroy_vector_add_descriptor(oprt_vector_add_descriptor* desc);

#ifdef __cplusplus
}
#endif
#endif
