"""The benchmark's check that a result is torch's (tests/bench/harness.py, tolerances.bench_tolerance): it must
let a correct bfloat16 result through and stop a wrong one. With the old fixed rtol 1e-2, atol 1e-3, torch's
own bf16 causal attention failed against its float32 reference (and an H100 bench row of ours was flagged
"result differs from torch", 2026-12-07)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from operator_runtime_testing.tolerances import bench_tolerance


def _close(x: torch.Tensor, y: torch.Tensor) -> bool:
    rtol, atol = bench_tolerance(x.dtype)
    return torch.allclose(x.float(), y.float(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("seed", range(3))
def test_a_correct_bf16_causal_attention_passes_and_a_wrong_one_does_not(seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 4, 512, 128, generator=g).to(torch.bfloat16) for _ in range(3))
    reference = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    ours = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # torch's bf16 kernel: correct, rounded
    assert not torch.allclose(ours.float(), reference, rtol=1e-2, atol=1e-3)  # what the old check said
    assert _close(ours, reference)
    off_by_one = torch.ones(512, 512, dtype=torch.bool).tril(1)  # each query also sees the next key
    assert not _close(F.scaled_dot_product_attention(q, k, v, attn_mask=off_by_one), reference)


def test_the_bound_is_the_old_one_for_float32_and_float16():
    assert bench_tolerance(torch.float32) == bench_tolerance(torch.float16) == (1e-2, 1e-3)
    assert bench_tolerance(torch.bfloat16) == (2 * 2**-7, 2**-8)
