"""matmul: ``a @ b`` (torch.matmul) for 2-d and batched 3-d operands, accumulated in f32."""

from __future__ import annotations

import torch

from .._internal import OpSignature, PreparedOp, bind_prepared, checks, run_eager

SIGNATURE = OpSignature("matmul", inputs=("a", "b"), tilelang="tiles")


def matmul(a: torch.Tensor, b: torch.Tensor, *, out: torch.Tensor | None = None,
           backend: str | None = None) -> torch.Tensor:
    """``a @ b``: (M, K) @ (K, N) -> (M, N), or batched (B, M, K) @ (B, K, N) -> (B, M, N), where a
    2-d operand or a batch of 1 repeats over the other's batch. a and b share a dtype."""
    if out is None:  # (with out given, the checks run once per layout: see plan_cache._key)
        a, b = checks.float_tensor("matmul", "a", a), checks.float_tensor("matmul", "b", b)
        out = torch.empty(_result_shape(a, b), dtype=a.dtype, device=a.device)
    return run_eager(SIGNATURE, out, (a, b), (), backend, prepare_matmul)


def prepare_matmul(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *,
                   backend: str | None = None) -> PreparedOp:
    a, b = checks.float_tensor("matmul", "a", a), checks.float_tensor("matmul", "b", b)
    out = checks.float_tensor("matmul", "out", out)
    checks.out_like("matmul", out, _result_shape(a, b), a.dtype)
    return bind_prepared(SIGNATURE, out, {"a": a, "b": b}, (), backend)


def _result_shape(a: torch.Tensor, b: torch.Tensor) -> torch.Size:
    """The shape of a @ b; raises naming the operand that does not fit."""
    for name, t in (("a", a), ("b", b)):
        if t.dim() not in (2, 3):
            raise ValueError(f"matmul: {name} has {t.dim()} dims {tuple(t.shape)}; matmul takes 2-d (M, K) @ (K, N) "
                             f"or batched 3-d (B, M, K) @ (B, K, N) operands")
    if a.dtype != b.dtype:
        raise TypeError(f"matmul: a is {a.dtype} but b is {b.dtype}; convert one so they match")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: a {tuple(a.shape)} and b {tuple(b.shape)} do not multiply: a's last dim "
                         f"(K={a.shape[-1]}) must equal b's second-to-last ({b.shape[-2]})")
    batch_a, batch_b = (a.shape[0] if a.dim() == 3 else 1), (b.shape[0] if b.dim() == 3 else 1)
    if batch_a != batch_b and 1 not in (batch_a, batch_b):
        raise ValueError(f"matmul: a {tuple(a.shape)} and b {tuple(b.shape)} have batches {batch_a} and {batch_b} "
                         f"that do not broadcast")
    batch = (max(batch_a, batch_b),) if max(a.dim(), b.dim()) == 3 else ()
    return torch.Size(batch + (a.shape[-2], b.shape[-1]))
