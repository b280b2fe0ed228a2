"""Deciding whether a lab kernel is right: the inputs it is given and the comparison with torch.
The same code judges a kernel in the student's notebook (immediate feedback) and in the grader
(the grade), where the inputs are drawn by the grader and the kernel runs in a sandbox."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..assertions import assert_matches_torch
from ..tolerances import ATOL_PER_TERM
from .cases import DTYPES, SHAPES, draw, output_shape, reference


@dataclass
class Case:
    dtype: torch.dtype
    shape: tuple
    inputs: list[torch.Tensor]  # on the CPU; a runner moves them to its device

    def blank_output(self, op: str, device: str) -> torch.Tensor:
        """NaN-filled, so an element the kernel never writes cannot pass as a stale zero."""
        return torch.full(output_shape(op, self.shape), float("nan"), dtype=self.dtype, device=device)


def lab_cases(op: str, device: str, seed: int | None = None) -> list[Case]:
    """Every lab input for ``op`` on ``device``'s dtypes; fresh random values unless seeded."""
    gen = torch.Generator().manual_seed(torch.seed() if seed is None else seed)
    return [Case(dtype, shape, draw(op, shape, dtype, "cpu", gen)) for dtype in DTYPES[device] for shape in SHAPES[op]]


def judge(op: str, name: str, case: Case, out) -> None:
    """Raises AssertionError naming the input when ``out`` is not torch's answer for ``case``."""
    if not isinstance(out, torch.Tensor):
        raise AssertionError(f"{op} ({name}) produced no output for shape {case.shape} {case.dtype}")
    expected = reference(op, *case.inputs).to(case.dtype)
    extra = ATOL_PER_TERM * case.inputs[0].double().abs().sum(-1) if op == "reduce_sum" else 0.0
    try:  # sums carry f32 accumulation error that grows with the terms added (tolerances.py)
        assert_matches_torch(out.cpu(), expected, exact=op == "copy", extra_atol=extra)
    except AssertionError as e:
        raise AssertionError(f"{op} ({name}) is wrong for shape {case.shape} {case.dtype}: {e}") from None
