"""softmax: ``torch.softmax(input, dim)``, max-subtracted and accumulated in f32."""

from __future__ import annotations

import ctypes

import torch

from .._internal import OpSignature, PreparedOp, bind_prepared, checks, run_eager

SIGNATURE = OpSignature("softmax", inputs=("input",), attrs=(ctypes.c_int64,), tilelang="rows")


def softmax(input: torch.Tensor, dim: int, *, out: torch.Tensor | None = None,
            backend: str | None = None) -> torch.Tensor:
    """Softmax over one dim; the result has input's shape and dtype."""
    if out is None:  # (with out given, the checks run once per layout: see plan_cache._key)
        input = checks.float_tensor("softmax", "input", input)
        out = torch.empty_like(input, memory_format=torch.contiguous_format)
    return run_eager(SIGNATURE, out, (input,), (dim,), backend, prepare_softmax)


def prepare_softmax(out: torch.Tensor, input: torch.Tensor, dim: int, *, backend: str | None = None) -> PreparedOp:
    input = checks.float_tensor("softmax", "input", input)
    out = checks.float_tensor("softmax", "out", out)
    d = checks.dim("softmax", dim, input.dim())
    checks.out_like("softmax", out, input.shape, input.dtype)
    return bind_prepared(SIGNATURE, out, {"input": input}, (d,), backend)
