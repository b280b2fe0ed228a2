"""Running a lab kernel on one input: a compiled TileLang program or a built CUDA library.
Used in the student's notebook and, for grading, inside the sandboxed runner."""

from __future__ import annotations

import torch

ELEMENTWISE = ("copy", "vector_add")  # kernels see 1-d tensors; row ops see (rows, row_len)


def nan_filled(shape, dtype: torch.dtype, device: str) -> torch.Tensor:
    """An output to hand a kernel: NaN, so an element it never writes cannot pass as a stale zero."""
    return torch.full(shape, float("nan"), dtype=dtype, device=device)


def target(device: str) -> str:
    return "cuda" if device == "cuda" else "c"


def compile_tilelang(program, device: str):
    from operator_runtime._internal.tilelang_backend import _tilelang

    return _tilelang().compile(program, target=target(device), execution_backend="cython")


def run_tilelang(kernel, op: str, inputs: list[torch.Tensor], out: torch.Tensor) -> None:
    if out.numel() == 0:  # a zero-block launch is an error on the GPU, and there is nothing to do
        return
    kernel(*[t.reshape(-1) if op in ELEMENTWISE else t for t in (*inputs, out)])
