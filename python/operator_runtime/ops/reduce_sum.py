"""reduce_sum: ``input.sum(dim, keepdim)``, accumulated in f32."""

from __future__ import annotations

import ctypes

import torch

from .._internal import OpSignature, PreparedOp, bind_prepared, checks, run_eager

SIGNATURE = OpSignature("reduce_sum", inputs=("input",), attrs=(ctypes.c_int64, ctypes.c_int32), tilelang="rows",
                        reduces_dim=True)


def reduce_sum(input: torch.Tensor, dim: int, keepdim: bool = False, *, out: torch.Tensor | None = None,
               backend: str | None = None) -> torch.Tensor:
    """Sum over one dim (negative counts from the end); the result keeps input's dtype."""
    if out is None:  # (with out given, the checks run once per layout: see plan_cache._key)
        input = checks.float_tensor("reduce_sum", "input", input)
        out = torch.empty(_result_shape(input, dim, keepdim), dtype=input.dtype, device=input.device)
    return run_eager(SIGNATURE, out, (input,), (dim, keepdim), backend, prepare_reduce_sum)


def prepare_reduce_sum(out: torch.Tensor, input: torch.Tensor, dim: int, keepdim: bool = False, *,
                       backend: str | None = None) -> PreparedOp:
    input = checks.float_tensor("reduce_sum", "input", input)
    out = checks.float_tensor("reduce_sum", "out", out)
    checks.out_like("reduce_sum", out, _result_shape(input, dim, keepdim), input.dtype)
    d = checks.dim("reduce_sum", dim, input.dim())
    return bind_prepared(SIGNATURE, out, {"input": input}, (d, int(keepdim)), backend)


def _result_shape(input: torch.Tensor, dim, keepdim) -> tuple[int, ...]:
    if not isinstance(keepdim, bool):
        raise TypeError(f"reduce_sum: keepdim must be a bool, got {type(keepdim).__name__}")
    d = checks.dim("reduce_sum", dim, input.dim())
    shape = list(input.shape)
    if input.dim() == 0:
        return ()
    if keepdim:
        shape[d] = 1
    else:
        del shape[d]
    return tuple(shape)
