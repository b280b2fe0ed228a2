"""The nvidia kernels' strategy overrides (OPRT_SOFTMAX_STRATEGY, OPRT_REDUCE_SUM_STRATEGY):
each value, read when a descriptor is created, still gives torch's results on every
correctness case; an unknown value is refused by name. The default ("auto") is what the
op suites test."""

from __future__ import annotations

import pytest
import torch

import operator_runtime as ort
from cases import load
from cases.spec import DTYPES, T
from operator_runtime_testing.assertions import assert_matches_torch
from operator_runtime_testing.tensors import make_tensor

MODES = {"softmax": ("OPRT_SOFTMAX_STRATEGY", ("old", "staged", "rowgrid")),
         "reduce_sum": ("OPRT_REDUCE_SUM_STRATEGY", ("old",))}
PARAMS = [(op, mode) for op, (_, modes) in MODES.items() for mode in modes]


@pytest.fixture(autouse=True)
def nvidia_only(backend):
    if backend != "nvidia":
        pytest.skip("the overrides choose among the nvidia backend's kernels")


@pytest.mark.parametrize("op,mode", PARAMS, ids=[f"{op}-{mode}" for op, mode in PARAMS])
def test_every_case_under_the_override(op, mode, backend, device, gen, monkeypatch):
    variable = MODES[op][0]
    monkeypatch.setenv(variable, mode)
    cases = load(op)
    prepare = getattr(ort, cases.PREPARE)
    for case in cases.correctness_cases():
        for dtype in DTYPES:
            inputs = [make_tensor(s, dtype, device, gen) if isinstance(s, T) else s for s in case.inputs]
            expected = cases.reference(*inputs, **case.attrs)
            out = torch.full(expected.shape, float("nan"), dtype=dtype, device=device)
            with prepare(out, *inputs, **case.attrs, backend=backend) as prepared:  # a new descriptor
                prepared.run()
            assert_matches_torch(out, expected, exact=cases.EXACT, extra_atol=cases.extra_atol(*inputs, **case.attrs),
                                 what=f"{op} {case.id} {dtype} under {variable}={mode}")


@pytest.mark.parametrize("op", sorted(MODES))
def test_unknown_value_is_refused(op, backend, device, monkeypatch):
    variable = MODES[op][0]
    monkeypatch.setenv(variable, "bogus")
    cases = load(op)
    x = torch.randn(4, 5, device=device)
    attrs = {"dim": -1}
    out = torch.empty(cases.reference(x, **attrs).shape, device=device)
    with pytest.raises(Exception, match=f"{variable}=bogus"):
        getattr(ort, cases.PREPARE)(out, x, **attrs, backend=backend)
