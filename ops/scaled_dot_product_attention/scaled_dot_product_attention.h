/* The `scaled_dot_product_attention` operator's C contract, identical for every backend library.
 *
 * out = softmax(query @ key^T * scale [+ causal mask]) @ value, as
 * torch.nn.functional.scaled_dot_product_attention(query, key, value, is_causal=, scale=, enable_gqa=)
 * without attn_mask or dropout; f32 accumulation, the result rounded once to out's dtype.
 *
 *   query (..., H,   Sq, D)    key (..., Hkv, Sk, D)    value (..., Hkv, Sk, Dv)    out (..., H, Sq, Dv)
 *
 * All four share one dtype (f32, f16 or bf16) and one rank (2..8): the dims before the last three
 * are batch dims, equal in all four; a 2-d call is one head. H == Hkv unless enable_gqa, where H
 * must be a multiple of Hkv and query head h reads key/value head h / (H / Hkv). Any strides.
 *   is_causal  0 or 1: key j is seen by query i only where j <= i (torch's top-left aligned
 *              mask, tril(ones(Sq, Sk)), also when Sq != Sk: checked on torch 2.13, not the
 *              bottom-right alignment; every row sees key 0, so none is fully masked)
 *   scale      multiplies query @ key^T; finite (torch's default 1/sqrt(D) is the caller's)
 * Sk = 0 gives out = 0, as torch does.
 */
#ifndef OPERATOR_RUNTIME_SCALED_DOT_PRODUCT_ATTENTION_H
#define OPERATOR_RUNTIME_SCALED_DOT_PRODUCT_ATTENTION_H

#include "operator_runtime/oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_scaled_dot_product_attention_descriptor oprt_scaled_dot_product_attention_descriptor;

OPRT_API oprt_status oprt_create_scaled_dot_product_attention_descriptor(
    oprt_scaled_dot_product_attention_descriptor** desc, const oprt_tensor_view* out, const oprt_tensor_view* query,
    const oprt_tensor_view* key, const oprt_tensor_view* value, int32_t is_causal, double scale, int32_t enable_gqa);
OPRT_API oprt_status oprt_get_scaled_dot_product_attention_workspace_size(
    const oprt_scaled_dot_product_attention_descriptor* desc, size_t* size);
OPRT_API oprt_status oprt_execute_scaled_dot_product_attention(
    const oprt_scaled_dot_product_attention_descriptor* desc, void* workspace, size_t workspace_size, void* out,
    const void* query, const void* key, const void* value, oprt_stream stream);
OPRT_API oprt_status oprt_destroy_scaled_dot_product_attention_descriptor(
    oprt_scaled_dot_product_attention_descriptor* desc);

#ifdef __cplusplus
}
#endif
#endif
