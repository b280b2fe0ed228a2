"""matmul: correctness against torch, out=, prepared execution and bad input (tests/cases/matmul.py)."""

import pytest
import torch

import operator_runtime as ort
from op_suite import define_tests

test_matches_torch, test_out_variant, test_prepared, test_bad_input = define_tests("matmul")


def test_mixed_dtypes_are_refused(backend, device):
    """The generic error cases build every input in one dtype; matmul names both of a pair."""
    a, b = torch.randn(4, 6, device=device), torch.randn(6, 5, device=device, dtype=torch.float16)
    with pytest.raises(TypeError, match="a is torch.float32 but b is torch.float16"):
        ort.matmul(a, b, backend=backend)
