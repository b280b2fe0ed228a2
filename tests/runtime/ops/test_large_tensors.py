"""Tensors past 2^31 elements: every index must be 64-bit.

Inputs are expanded views (stride 0), so only the outputs cost memory.
"""

from __future__ import annotations

import os

import pytest
import torch

import operator_runtime as ort

N = 2**31 + 5  # just past what a 32-bit index can count


def _memory_gib() -> float:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES") / 2**30
    except (ValueError, OSError):
        return 0.0


def test_reduce_sum_over_2_31_elements(backend, device):
    if backend == "tilelang":
        pytest.skip("the tilelang strided reduction gives each output one thread: one output of 2^31 terms "
                    "is 2^31 serial steps in f32 (tilelang_backend.py)")
    x = torch.full((1,), 0.5, device=device).expand(N)
    total = ort.reduce_sum(x, 0, backend=backend)
    # exact in f32 only up to 2^24 terms per accumulator; allow the f32 accumulation error
    assert abs(total.item() - N * 0.5) <= 1e-3 * N * 0.5, total.item()


def test_copy_into_2_31_elements(backend, device):
    if backend == "tilelang" and device == "cpu":
        pytest.skip("TileLang's C target runs one thread: 2^31 strided elements take too long for a test")
    if device == "cpu" and _memory_gib() < 12:
        pytest.skip("needs 12 GiB of free memory for a 4 GiB output and its check")
    pattern = torch.tensor([1.0, -2.0, 3.0, -4.0, 5.0], dtype=torch.float16, device=device)
    src = pattern.view(1, 5).expand((N + 4) // 5, 5)  # N rounded up to rows of 5, stride 0 along rows
    out = torch.empty(src.shape, dtype=torch.float16, device=device)
    ort.copy(src, out=out, backend=backend)
    assert out.numel() >= N
    # every row must equal the pattern, including the last one past 2^31
    assert torch.equal(out[-1], pattern) and torch.equal(out[0], pattern)
    assert bool((out == pattern).all())
