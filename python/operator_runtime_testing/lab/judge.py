"""Deciding whether a lab kernel is right: the inputs it is given and the comparison with torch.
The same code judges a kernel in the student's notebook (immediate feedback) and in the grader
(the grade), where the inputs are drawn by the grader and the kernel runs in a sandbox."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..assertions import assert_matches_torch
from ..tolerances import ATOL_PER_TERM
from .cases import DTYPES, SHAPES, SPECIAL, draw, output_shape, reference, special_inputs
from .kernels import nan_filled


@dataclass
class Case:
    dtype: torch.dtype
    shape: tuple
    inputs: list[torch.Tensor]  # on the CPU; a runner moves them to its device

    def blank_output(self, op: str, device: str) -> torch.Tensor:
        return nan_filled(output_shape(op, self.shape), self.dtype, device)


def lab_cases(op: str, device: str, seed: int | None = None) -> list[Case]:
    """Every lab input for ``op`` on ``device``'s dtypes; fresh random values unless seeded."""
    gen = torch.Generator().manual_seed(torch.seed() if seed is None else seed)
    cases = [Case(dtype, shape, draw(op, shape, dtype, "cpu", gen)) for dtype in DTYPES[device] for shape in SHAPES[op]]
    for dtype in DTYPES[device]:
        special = special_inputs(op, dtype, gen)
        if special:
            cases.append(Case(dtype, tuple(special[0].shape), special))
    return sorted(cases, key=lambda c: math.prod(c.shape))  # the smallest failing input is reported first


def judge(op: str, name: str, case: Case, out) -> None:
    """Raises AssertionError naming the input when ``out`` is not torch's answer for ``case``."""
    if not isinstance(out, torch.Tensor):
        raise AssertionError(f"{op} ({name}) produced no output for shape {case.shape} {case.dtype}")
    expected = reference(op, *case.inputs).to(case.dtype)
    extra = ATOL_PER_TERM * case.inputs[0].double().abs().sum(-1) if op == "reduce_sum" else 0.0
    try:  # sums carry f32 accumulation error that grows with the terms added (tolerances.py)
        assert_matches_torch(out.cpu(), expected, exact=op == "copy", extra_atol=extra)
    except AssertionError as e:
        diagnosis = diagnose(out.detach().cpu(), expected, op == "copy", special=SPECIAL.get(op) == case.shape)
        raise AssertionError(f"{op} ({name}) is wrong for shape {case.shape} {case.dtype}: {e}\n{diagnosis}") from None


# The rows of a SPECIAL case (cases.special_inputs) and what a wrong one says about the kernel.
SPECIAL_ROWS = {
    0: "the row of large values is wrong: exp(x) overflows float32 past x = 88. Hint: subtract the row's max "
       "before exp (the max trick)",
    1: "the row with some -inf entries is wrong: exp(-inf) is 0, but a running max that starts at -inf makes "
       "-inf - -inf = NaN. Hint: start the max at the lowest float, or skip the rescale while the max is -inf",
    2: "the fully masked row (every entry -inf) is wrong: torch's softmax is NaN there (0 / 0); a kernel that "
       "returns 0 or 1/n there treats masked rows differently from torch",
}


def diagnose(got: torch.Tensor, want: torch.Tensor, exact: bool, special: bool = False) -> str:
    """Which elements are wrong, in words a student can act on, with the first few of them."""
    from ..tolerances import TOLERANCES

    g, w = got.double().reshape(want.shape), want.double()
    rtol, atol = (0.0, 0.0) if exact else TOLERANCES[want.dtype]
    close = (g - w).abs() <= atol + rtol * w.abs()
    wrong = ~(close | (g.isnan() & w.isnan()) | ((g == w) & w.isinf()))
    count = int(wrong.sum())
    if count == 0:
        return ""
    lines = [f"{count} of {w.numel()} elements are wrong."]
    unwritten = wrong & g.isnan() & ~w.isnan()
    if int(unwritten.sum()) == count and not special:
        lines.append("They are NaN where torch's are finite: the check fills the output with NaN, so most likely "
                     "your kernel never wrote them (or computed NaN there).")
    rows = wrong.reshape(-1, w.shape[-1]) if w.dim() else wrong.reshape(1, 1)
    bad_rows = rows.any(-1).nonzero().flatten().tolist()
    flat = wrong.flatten()
    first_bad = int(flat.nonzero()[0])
    if count == w.numel():
        lines.append("Every element is wrong: check the indexing (rows and columns swapped?) and the formula.")
    elif w.dim() == 1 and bool(flat[first_bad:].all()):
        lines.append(f"Only the tail is wrong: the last {count} elements. Hint: guard the tail, your tile does "
                     "not divide n; launch T.ceildiv(n, TILE) blocks and skip indices >= n.")
    elif w.dim() == 2 and rows.shape[0] > 1 and all(bool(rows[r].all()) for r in bad_rows):
        lines.append(f"Whole rows are wrong: rows {bad_rows[:8]}{' ...' if len(bad_rows) > 8 else ''} "
                     f"of {rows.shape[0]}.")
    if special:
        lines += [f"Row {r}: {SPECIAL_ROWS[r]}." for r in bad_rows if r in SPECIAL_ROWS]
    shown = flat.nonzero().flatten()[:5].tolist()
    lines.append("First wrong elements (flat index: got, expected): "
                 + "; ".join(f"{i}: {g.flatten()[i].item():.6g}, {w.flatten()[i].item():.6g}" for i in shown))
    return "\n".join(lines)
