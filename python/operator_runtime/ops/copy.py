"""copy: ``out.copy_(input)``, with broadcasting and f32/f16/bf16 conversion."""

from __future__ import annotations

import torch

from .._internal import OpSignature, PreparedOp, bind_prepared, checks, run_eager

SIGNATURE = OpSignature("copy", inputs=("input",), in_place_ok=True, tilelang="elementwise", converts_dtype=True)


def copy(input: torch.Tensor, *, out: torch.Tensor | None = None, dtype: torch.dtype | None = None,
         backend: str | None = None) -> torch.Tensor:
    """Copy ``input`` into ``out`` (a new contiguous tensor of ``dtype`` when omitted).

    ``input`` may have any strides and broadcasts to ``out``'s shape, as in ``Tensor.copy_``.
    """
    if out is None:  # (with out given, the checks run once per layout: see plan_cache._key)
        input = checks.float_tensor("copy", "input", input)
        if dtype is not None and dtype not in checks.DTYPE_CODES:  # (named here: the out made from it is not the caller's)
            raise TypeError(f"copy: dtype={dtype} is not supported; supported dtypes are {checks.DTYPE_NAMES}")
        out = torch.empty_like(input, dtype=dtype, memory_format=torch.contiguous_format)
    elif dtype is not None and checks.float_tensor("copy", "out", out).dtype != dtype:
        raise TypeError(f"copy: dtype={dtype} disagrees with out's dtype {out.dtype}")
    return run_eager(SIGNATURE, out, (input,), (), backend, prepare_copy)


def prepare_copy(out: torch.Tensor, input: torch.Tensor, *, backend: str | None = None) -> PreparedOp:
    input = checks.float_tensor("copy", "input", input)
    out = checks.float_tensor("copy", "out", out)
    if input.dim() > out.dim() or checks.broadcast_shape(input.shape, out.shape) != tuple(out.shape):
        raise ValueError(f"copy: input of shape {tuple(input.shape)} cannot broadcast to out's shape {tuple(out.shape)}")
    checks.no_self_overlap("copy", "out", out)
    return bind_prepared(SIGNATURE, out, {"input": input}, (), backend)
