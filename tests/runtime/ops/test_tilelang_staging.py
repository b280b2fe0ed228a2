"""Matmul operands TileLang's program cannot read as they are, staged through padded copies
(operator_runtime/_internal/tilelang_staging.py): checked on the CPU with the GPU's padding (K and N
rounded up to multiples of 8) and a stand-in for the kernel that multiplies the whole staged buffers,
pads included, so a pad that is not zero shows in the result; then the real C-target kernel through
the API; then the eager cache's way back to prepare when a cached plan refuses new addresses."""

from __future__ import annotations

import pytest
import torch

import operator_runtime as ort
from operator_runtime._internal import plan_cache, tilelang_backend, tilelang_staging
from operator_runtime.errors import UnsupportedError
from operator_runtime.ops import SIGNATURES

MATMUL = SIGNATURES["matmul"]


class _WholeBufferProduct:
    """The kernel's stand-in: out = a @ b over the operands it is given as they are, pads included. It
    first asks the staging's own rules whether the GPU program could read them as they are (it must)."""

    def __init__(self, out, a, b):
        copies = tilelang_staging.staged_operands(out, a, b, gpu=True)
        assert not any(copies), f"operands the GPU program cannot read, (a, b, out): {copies}"
        self.out, self.a, self.b, self.closed = out, a, b, False

    def run(self, *inputs, out=None):
        a, b = inputs or (self.a, self.b)
        out = self.out if out is None else out
        out.copy_(torch.matmul(a, b).reshape(out.shape))  # a 2-d operand against a batch of one: as the program

    def close(self):
        self.closed = True


def _operand(shape, layout, gen):
    if layout == "transposed":
        return torch.randn(*shape[:-2], shape[-1], shape[-2], generator=gen).transpose(-1, -2)
    if layout == "offset":
        flat = torch.randn(1 + torch.Size(shape).numel(), generator=gen)
        return flat[1:].view(shape)
    return torch.randn(shape, generator=gen)


@pytest.mark.parametrize("a_shape, b_shape, layout", [
    ((1, 1), (1, 1), "contiguous"),
    ((7, 13), (13, 5), "contiguous"),          # K and N not multiples of 8
    ((33, 1995), (1995, 83), "transposed"),    # a vocabulary-like N, a transposed weight
    ((4, 9, 24), (24, 17), "offset"),          # a batch against one matrix, off a 16-byte boundary
    ((9, 24), (3, 24, 10), "contiguous"),      # one matrix against a batch: repeated into it
    ((1, 9, 16), (3, 16, 8), "transposed"),    # a batch of one against three
])
def test_padded_copies_give_the_product_and_pads_stay_zero(a_shape, b_shape, layout, gen):
    a, b = _operand(a_shape, layout, gen), _operand(b_shape, "contiguous", gen)
    want = torch.matmul(a.double(), b.double())
    out = torch.empty(want.shape, dtype=torch.float32)
    staged = tilelang_staging.StagedMatmul(MATMUL, out, a, b, _WholeBufferProduct, gpu=True)
    shape_a, shape_b, shape_out = tilelang_staging.staged_shapes(out, a, b, gpu=True)
    assert shape_a[-1] % 8 == 0 and shape_b[-1] % 8 == 0 and shape_a[-1] == shape_b[-2] >= a.shape[-1]
    for _ in range(2):  # twice, the second time with new values: the pads must still be zero
        torch.testing.assert_close(staged.run().double(), want, rtol=1e-4, atol=1e-3)
        a2, b2 = _operand(a_shape, layout, gen), _operand(b_shape, "contiguous", gen)
        out2 = torch.empty_like(out)
        got = staged.run(a2, b2, out=out2)
        assert got is out2
        torch.testing.assert_close(got.double(), torch.matmul(a2.double(), b2.double()), rtol=1e-4, atol=1e-3)
    k = a.shape[-1]  # the K pads meet each other in the product: each must be zero on its own
    for pads in (staged._a[..., k:] if staged._a is not None else None,
                 staged._b[..., k:, :] if staged._b is not None else None):
        assert pads is None or not pads.any()
    inner = staged._inner
    staged.close()
    assert inner.closed
    with pytest.raises(RuntimeError, match="closed"):
        staged.run()


@pytest.mark.parametrize("a_shape, a_layout, b_shape, b_layout, want", [
    ((16, 64), "contiguous", (64, 40), "transposed", (False, True, False)),   # x @ W.t(): W alone
    ((16, 60), "contiguous", (60, 40), "contiguous", (True, True, False)),    # K = 60: both padded in K
    ((16, 64), "contiguous", (64, 41), "contiguous", (False, True, True)),    # N = 41: b and the product
    ((16, 64), "offset", (64, 40), "contiguous", (True, False, False)),       # a off a 16-byte boundary
    ((16, 64), "contiguous", (3, 64, 40), "contiguous", (True, False, False)),  # a repeated over b's batch
])
def test_only_what_the_program_cannot_read_is_copied(a_shape, a_layout, b_shape, b_layout, want, gen):
    a, b = _operand(a_shape, a_layout, gen), _operand(b_shape, b_layout, gen)
    out = torch.empty(torch.matmul(a, b).shape)
    assert tilelang_staging.staged_operands(out, a, b, gpu=True) == want
    assert tilelang_staging.staged_operands(out, a, b, gpu=False) == (not a.is_contiguous(), not b.is_contiguous(), False)
    with tilelang_staging.StagedMatmul(MATMUL, out, a, b, _WholeBufferProduct, gpu=True) as staged:
        torch.testing.assert_close(staged.run().double(), a.double() @ b.double(), rtol=1e-4, atol=1e-3)
        a2, b2, out2 = _operand(a_shape, a_layout, gen), _operand(b_shape, b_layout, gen), torch.empty_like(out)
        torch.testing.assert_close(staged.run(a2, b2, out=out2).double(), a2.double() @ b2.double(), rtol=1e-4,
                                   atol=1e-3)


def test_new_buffers_of_another_layout_are_refused(gen):
    a, b = _operand((5, 12), "transposed", gen), _operand((12, 3), "contiguous", gen)
    out = torch.empty(5, 3)
    with tilelang_staging.StagedMatmul(MATMUL, out, a, b, _WholeBufferProduct, gpu=True) as staged:
        with pytest.raises(ValueError, match="a must match the prepared"):
            staged.run(a.contiguous(), b)


def test_the_api_stages_a_transposed_operand_on_the_c_target(gen):
    pytest.importorskip("tilelang")
    a, b = _operand((6, 40), "transposed", gen).to(torch.bfloat16), _operand((40, 9), "contiguous", gen).to(torch.bfloat16)
    out = torch.empty(6, 9, dtype=torch.bfloat16)
    with ort.prepare_matmul(out, a, b, backend="tilelang") as prepared:
        assert "staged" in repr(prepared)
        prepared.run()
    torch.testing.assert_close(out.float(), (a.double() @ b.double()).float(), rtol=1e-2, atol=1e-2)
    eager = ort.matmul(a, b, backend="tilelang")
    torch.testing.assert_close(eager, out, rtol=0, atol=0)


def test_a_cached_plan_that_refuses_new_addresses_goes_back_to_prepare():
    class RefusingPlan:  # as AlignmentCheckedPlan does with a misaligned pointer
        workspace_bytes = 0

        def call(self, *pointers_and_stream):
            raise UnsupportedError("matmul: a data pointer is 2 bytes past a boundary")

        def close(self):
            pass

    prepared = []

    class Prepared:
        def __init__(self, out, a, b, backend=None):
            prepared.append(backend)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def run(self):
            pass

        def detach_plan(self):  # the first prepare leaves a plan in the cache, later ones none (staged)
            return RefusingPlan() if len(prepared) == 1 else None

    plan_cache.cache_clear()
    a, b, out = torch.randn(4, 8), torch.randn(8, 8), torch.empty(4, 8)
    try:
        plan_cache.run_eager(MATMUL, out, (a, b), (), "tilelang", Prepared)
        assert prepared == ["tilelang"]
        assert plan_cache.run_eager(MATMUL, out, (a, b), (), "tilelang", Prepared) is out  # a hit that refuses
        assert prepared == ["tilelang", "tilelang"]
    finally:
        plan_cache.cache_clear()


def test_a_broadcast_operand_counts_at_its_own_size_where_it_is_not_copied():
    """On the CPU the C kernel repeats a batch of one itself: (16384, 4096) @ (64, 4096, 8) is 2^26 and 2^21
    elements and must not be refused as if a were copied to 64 x 16384 x 4096 = 2^32 (the GPU copies it)."""
    a = torch.empty(16384, 4096, dtype=torch.bfloat16, device="meta")
    b = torch.empty(64, 4096, 8, dtype=torch.bfloat16, device="meta")
    out = torch.empty(64, 16384, 8, dtype=torch.bfloat16, device="meta")
    assert tilelang_staging.staged_operands(out, a, b, gpu=False) == (False, False, False)
    tilelang_backend._refuse_matmul(out, a, b, gpu=False)  # no UnsupportedError
