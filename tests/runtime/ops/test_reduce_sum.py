"""reduce_sum: correctness against torch, out=, prepared execution and bad input (tests/cases/reduce_sum.py),
and long sums no less accurate than torch's."""

import pytest
import torch

import operator_runtime as ort
from cases.reduce_sum import LONG_SUMS
from op_suite import define_tests

test_matches_torch, test_out_variant, test_prepared, test_bad_input = define_tests("reduce_sum")


# A lucky torch must not make the bound impossible: allow a few eps of the larger of the sum (its
# final rounding to float32) and the column's 2-norm (the scale a good pairwise or chunked float32
# sum errs by: a zero-mean column's sum can land near 0 by chance, and its ulp then says nothing
# about the terms). A single float32 accumulator errs by ~3-25x this floor on these columns.
ULPS_FLOOR = 4


@pytest.mark.parametrize("shape", LONG_SUMS, ids=lambda s: "x".join(map(str, s)))
def test_long_column_sums_as_accurate_as_torch(backend, device, gen, shape):
    """Max error against a float64 sum at most 2x torch's on the same input and device."""
    # Zero-mean terms: the column sums stay small (~sqrt(n)), so their ulp is small, while a
    # single f32 accumulator's error grows with every term it adds (a kernel summing a
    # 100003-long column that way was 7.6x less accurate than torch, issue 16).
    x = torch.randn(shape, generator=gen).to(device)
    try:
        ours = ort.reduce_sum(x, 0, backend=backend)
    except ort.UnsupportedError as refused:  # a backend that only reduces the last dim
        pytest.skip(str(refused))
    exact = x.cpu().double().sum(0)
    our_error = (ours.cpu().double() - exact).abs().max().item()
    torch_error = (torch.sum(x, 0).cpu().double() - exact).abs().max().item()
    scale = torch.maximum(exact.abs(), x.cpu().double().norm(dim=0)).max().item()
    floor = ULPS_FLOOR * torch.finfo(torch.float32).eps * scale
    bound = max(2 * torch_error, floor)
    assert our_error <= bound, (f"max error {our_error:.3g} against float64, torch's {torch_error:.3g} "
                                f"(bound {bound:.3g}) for {tuple(shape)} summed over dim 0")
