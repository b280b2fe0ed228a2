"""Comparing runtime results with torch."""

from __future__ import annotations

import torch

from .tolerances import TOLERANCES


def assert_matches_torch(actual: torch.Tensor, expected: torch.Tensor, *, exact: bool = False,
                         extra_atol: float | torch.Tensor = 0.0, what: str = "result") -> None:
    """``actual`` equals ``expected`` (a float64 reference) within the dtype's tolerance.

    Shape and dtype must match exactly; NaN must sit where the reference has NaN and
    infinities must match in sign. ``exact`` demands bit-equal values (copy, conversions).
    ``extra_atol`` widens atol (a scalar or a tensor broadcast to the result) for sums.
    """
    assert isinstance(actual, torch.Tensor), f"{what}: expected a tensor, got {type(actual).__name__}"
    assert actual.shape == expected.shape, f"{what}: shape {tuple(actual.shape)} != torch's {tuple(expected.shape)}"
    expected_rounded = expected.to(actual.dtype)
    if exact:
        torch.testing.assert_close(actual.cpu(), expected_rounded.cpu(), rtol=0, atol=0, equal_nan=True, msg=lambda m: f"{what}: {m}")
        return
    rtol, atol = TOLERANCES[actual.dtype]
    got = actual.detach().cpu().double()
    want = expected_rounded.cpu().double()
    nan_got, nan_want = got.isnan(), want.isnan()
    assert torch.equal(nan_got, nan_want), f"{what}: NaN at {int((nan_got != nan_want).sum())} unexpected positions"
    inf_want = want.isinf()
    assert torch.equal(got.isinf(), inf_want) and torch.equal(got[inf_want], want[inf_want]), f"{what}: infinities differ"
    finite = ~(nan_want | inf_want)
    bound = atol + torch.as_tensor(extra_atol, dtype=torch.float64).expand_as(want) + rtol * want.abs()
    err = (got - want).abs()
    bad = finite & (err > bound)
    if bad.any():
        i = int(bad.flatten().nonzero()[0])
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {want.numel()} elements out of tolerance (rtol {rtol}, atol {atol}); "
            f"first at flat index {i}: got {got.flatten()[i].item()!r}, torch {want.flatten()[i].item()!r}"
        )
