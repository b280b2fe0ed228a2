"""vector_add: ``a + b`` with torch broadcasting."""

from __future__ import annotations

import torch

from .._internal import OpSignature, PreparedOp, bind_prepared, checks, run_eager

SIGNATURE = OpSignature("vector_add", inputs=("a", "b"), in_place_ok=True, tilelang="elementwise")


def vector_add(a: torch.Tensor, b: torch.Tensor, *, out: torch.Tensor | None = None,
               backend: str | None = None) -> torch.Tensor:
    """``a + b``; a and b share a dtype and broadcast against each other."""
    if out is None:  # (with out given, the checks run once per layout: see plan_cache._key)
        a, b = checks.float_tensor("vector_add", "a", a), checks.float_tensor("vector_add", "b", b)
        out = torch.empty(_broadcast_shape(a, b), dtype=a.dtype, device=a.device)
    return run_eager(SIGNATURE, out, (a, b), (), backend, prepare_vector_add)


def prepare_vector_add(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *,
                       backend: str | None = None) -> PreparedOp:
    a, b = checks.float_tensor("vector_add", "a", a), checks.float_tensor("vector_add", "b", b)
    out = checks.float_tensor("vector_add", "out", out)
    if a.dtype != b.dtype:
        raise TypeError(f"vector_add: a is {a.dtype} but b is {b.dtype}; convert one so they match")
    checks.out_like("vector_add", out, _broadcast_shape(a, b), a.dtype)
    return bind_prepared(SIGNATURE, out, {"a": a, "b": b}, (), backend)


def _broadcast_shape(a: torch.Tensor, b: torch.Tensor) -> torch.Size:
    shape = checks.broadcast_shape(a.shape, b.shape)
    if shape is None:
        raise ValueError(f"vector_add: a {tuple(a.shape)} and b {tuple(b.shape)} do not broadcast")
    return torch.Size(shape)
