/* The `matmul` operator's C contract, identical for every backend library.
 *
 * out = a @ b with f32 accumulation; a, b and out share one dtype (f32, f16 or bf16).
 *   a (M, K),    b (K, N),    out (M, N)
 *   a (B, M, K), b (B, K, N), out (B, M, N)   batched; a 2-d operand, or a batch of 1,
 *                                             repeats over the other's batch (torch.matmul)
 * Any strides the views describe (transposed operands included). K = 0 gives out = 0.
 */
#ifndef OPERATOR_RUNTIME_MATMUL_H
#define OPERATOR_RUNTIME_MATMUL_H

#include "operator_runtime/oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_matmul_descriptor oprt_matmul_descriptor;

OPRT_API oprt_status oprt_create_matmul_descriptor(oprt_matmul_descriptor** desc, const oprt_tensor_view* out,
                                                   const oprt_tensor_view* a, const oprt_tensor_view* b);
OPRT_API oprt_status oprt_get_matmul_workspace_size(const oprt_matmul_descriptor* desc, size_t* size);
OPRT_API oprt_status oprt_execute_matmul(const oprt_matmul_descriptor* desc, void* workspace, size_t workspace_size,
                                         void* out, const void* a, const void* b, oprt_stream stream);
OPRT_API oprt_status oprt_destroy_matmul_descriptor(oprt_matmul_descriptor* desc);

#ifdef __cplusplus
}
#endif
#endif
