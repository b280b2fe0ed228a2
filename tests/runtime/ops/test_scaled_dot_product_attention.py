"""scaled_dot_product_attention: correctness against torch, out=, prepared execution and bad input
(tests/cases/scaled_dot_product_attention.py)."""

import pytest
import torch

import operator_runtime as ort
from cases import extra_atol, reference
from cases.spec import DTYPES, Case, tilelang_refusal
from op_suite import define_tests
from operator_runtime_testing.assertions import assert_matches_torch

OP = "scaled_dot_product_attention"
test_matches_torch, test_out_variant, test_prepared, test_bad_input = define_tests(OP)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("b,h,hkv,sq,sk,d,attrs", [
    (2, 4, 4, 33, 40, 64, {}),
    (1, 8, 2, 65, 65, 64, {"is_causal": True, "enable_gqa": True}),
    (2, 4, 1, 3, 130, 32, {"enable_gqa": True}),
], ids=["bshd", "bshd-gqa-causal", "bshd-mqa-decode"])
def test_heads_transposed_layout(backend, device, gen, dtype, b, h, hkv, sq, sk, d, attrs):
    """Most callers hold (B, S, H, D) and pass .transpose(1, 2): query, key and value strided over heads
    and sequence, out too (written through its strides)."""
    def draw(s, heads):
        return torch.randn(b, s, heads, d, generator=gen).to(device=device, dtype=dtype).transpose(1, 2)
    q, k, v = draw(sq, h), draw(sk, hkv), draw(sk, hkv)
    if backend == "tilelang" and (why := tilelang_refusal(OP, Case("bshd", ()), dtype, device)):
        with pytest.raises(ort.UnsupportedError, match=why):  # (float32 on the GPU)
            ort.scaled_dot_product_attention(q, k, v, **attrs, backend=backend)
        return
    want = reference(OP, q, k, v, **attrs)
    extra = extra_atol(OP, q, k, v, **attrs)
    assert_matches_torch(ort.scaled_dot_product_attention(q, k, v, **attrs, backend=backend), want,
                         extra_atol=extra, what="(B, S, H, D).transpose(1, 2)")
    out = torch.full((b, sq, h, d), float("nan"), dtype=dtype, device=device).transpose(1, 2)
    ort.scaled_dot_product_attention(q, k, v, **attrs, out=out, backend=backend)
    assert_matches_torch(out, want, extra_atol=extra, what="out= (B, S, H, D).transpose(1, 2)")


def test_mixed_dtypes_are_refused(backend, device):
    """The generic error cases build every input in one dtype; the op names the operand that differs."""
    q = torch.randn(1, 2, 3, 8, device=device)
    k = torch.randn(1, 2, 5, 8, device=device, dtype=torch.float16)
    with pytest.raises(TypeError, match="key is torch.float16 but query is torch.float32"):
        ort.scaled_dot_product_attention(q, k, k.float(), backend=backend)
