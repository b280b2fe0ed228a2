"""softmax: correctness against torch, out=, prepared execution and bad input (tests/cases/softmax.py)."""

import pytest
import torch

import operator_runtime as ort
from op_suite import define_tests

test_matches_torch, test_out_variant, test_prepared, test_bad_input = define_tests("softmax")


def test_cpu_rows_longer_than_the_scratch_row(gen):
    """The CPU kernel streams rows over 2^22 elements from the input (no f32 scratch row): sums
    of 4 million terms stay near float64 (chunked f32 carried in f64; one f32 accumulator was
    0.14% off), and a NaN or +inf still makes its row NaN, as in torch."""
    if not ort.is_available("cpu"):
        pytest.skip("needs the cpu backend")
    n = (1 << 22) + 5  # past the kernel's kMaxScratchRow, and not a multiple of the vector width
    x = torch.randn(3, n, generator=gen) * 5
    x[1, 77], x[2, n - 1] = float("nan"), float("inf")
    got = ort.softmax(x, -1, backend="cpu")
    want = torch.softmax(x.double(), -1)
    torch.testing.assert_close(got[0].double(), want[0], rtol=1e-4, atol=1e-9)
    assert got[1:].isnan().all()
