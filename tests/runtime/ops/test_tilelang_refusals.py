"""Each case record's expected tilelang refusal on a GPU, checked without one.

The op suites run the GPU rules only on a GPU machine (tests/cases/spec.py tilelang_refusal: the
alignment, batch and dtype rules of matmul's and attention's GPU programs). Four matmul records once
named a refusal the GPU kernel does not give, and only an H100 run showed it. Here every correctness
case of every operator goes through the API on the CPU as far as the tilelang backend, and the
operands the kernel would get are handed to the backend's own refusal rules with the GPU branch
(tilelang_backend._refuse(..., gpu=True)); what they say must be what the record expects."""

from __future__ import annotations

import re

import pytest

import operator_runtime as ort
from cases import load
from cases.spec import DTYPES, tilelang_refusal
from op_suite import build
from operator_runtime._internal import plan_cache
from operator_runtime.ops import SIGNATURES

tilelang_backend = pytest.importorskip("operator_runtime._internal.tilelang_backend")

CASES = [(op, case) for op in SIGNATURES if SIGNATURES[op].tilelang for case in load(op).correctness_cases()]


class _Reached(Exception):
    """The call got as far as the tilelang backend: the kernel's operands."""

    def __init__(self, signature, out, inputs):
        super().__init__(signature.name)
        self.args_for_refuse = (signature, out, inputs)


def _kernel_operands(monkeypatch, op, case, dtype, gen):
    def reached(signature, out, inputs, attrs):
        raise _Reached(signature, out, inputs)

    monkeypatch.setattr(tilelang_backend, "prepare", reached)
    plan_cache.cache_clear()  # a plan an earlier test left for this layout would skip prepare
    inputs = build(case.inputs, dtype, "cpu", gen)
    api = getattr(ort, load(op).API)
    try:
        api(*inputs, **case.attrs, backend="tilelang")
    except _Reached as r:
        return r.args_for_refuse
    except ort.UnsupportedError as e:  # refused before the kernel's operands exist: the same rule on any device
        return str(e)
    pytest.fail(f"{op} {case.id}: the call returned without reaching the tilelang backend")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("op, case", CASES, ids=[f"{op}-{case.id}" for op, case in CASES])
def test_the_gpu_kernel_refuses_what_the_record_says(monkeypatch, op, case, dtype, gen):
    want = tilelang_refusal(op, case, dtype, "cuda")
    operands = _kernel_operands(monkeypatch, op, case, dtype, gen)
    if isinstance(operands, str):
        said = operands
    else:
        try:
            tilelang_backend._refuse(*operands, gpu=True)
            said = None
        except ort.UnsupportedError as e:
            said = str(e)
    if want is None:
        assert said is None, f"the record expects the GPU kernel to run {case.id}, but it refuses: {said}"
    else:
        assert said is not None and re.search(want, said), \
            f"the record expects the refusal {want!r} for {case.id}; the GPU rules say {said!r}"
