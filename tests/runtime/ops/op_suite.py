"""Generic operator tests: every operator gets every check by writing tests/cases/<op>.py.

tests/runtime/ops/test_<op>.py binds these to one operator:

    test_matches_torch, test_out_variant, test_prepared, test_bad_input = define_tests("softmax")
"""

from __future__ import annotations

import inspect

import pytest
import torch

import operator_runtime as ort
from cases import exact, extra_atol, load, reference
from cases.spec import DTYPES, T, tilelang_refusal
from operator_runtime_testing.assertions import assert_matches_torch
from operator_runtime_testing.tensors import make_tensor

DTYPE_IDS = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}


def build(specs, dtype, device, gen) -> list:
    return [make_tensor(s, dtype, device, gen) if isinstance(s, T) else s for s in specs]


def define_tests(op: str):
    cases = load(op)
    api, prepare = getattr(ort, cases.API), getattr(ort, cases.PREPARE)
    prepare_kwargs = set(inspect.signature(prepare).parameters)

    def check(result, inputs, attrs, what="result"):
        assert_matches_torch(result, reference(op, *inputs, **attrs), exact=exact(op),
                             extra_atol=extra_atol(op, *inputs, **attrs), what=f"{op} {what}")

    def refusal(case, dtype, backend, device) -> str | None:
        return tilelang_refusal(op, case, dtype, device) if backend == "tilelang" else None

    def empty_out(inputs, attrs, dtype, device):
        shape = reference(op, *inputs, **attrs).shape
        # NaN-filled, so an element the kernel forgets to write cannot pass.
        return torch.full(shape, float("nan"), dtype=attrs.get("dtype", dtype), device=device)

    correctness = pytest.mark.parametrize("case", cases.correctness_cases(), ids=lambda c: c.id)
    dtypes = pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS.get)

    @correctness
    @dtypes
    def test_matches_torch(case, dtype, backend, device, gen):
        inputs = build(case.inputs, dtype, device, gen)
        if why := refusal(case, dtype, backend, device):  # a case this backend must refuse by name
            with pytest.raises(ort.UnsupportedError, match=why):
                api(*inputs, **case.attrs, backend=backend)
            return
        result = api(*inputs, **case.attrs, backend=backend)
        assert result.device.type == device
        check(result, inputs, case.attrs)

    @correctness
    @dtypes
    def test_out_variant(case, dtype, backend, device, gen):
        inputs = build(case.inputs, dtype, device, gen)
        out = empty_out(inputs, case.attrs, dtype, device)
        if why := refusal(case, dtype, backend, device):
            with pytest.raises(ort.UnsupportedError, match=why):
                api(*inputs, **case.attrs, out=out, backend=backend)
            return
        result = api(*inputs, **case.attrs, out=out, backend=backend)
        assert result is out, "the out= form must return out itself"
        check(out, inputs, case.attrs, "out=")

    @correctness
    @dtypes
    def test_prepared(case, dtype, backend, device, gen):
        inputs = build(case.inputs, dtype, device, gen)
        out = empty_out(inputs, case.attrs, dtype, device)
        attrs = {k: v for k, v in case.attrs.items() if k in prepare_kwargs}
        if why := refusal(case, dtype, backend, device):
            with pytest.raises(ort.UnsupportedError, match=why):
                prepare(out, *inputs, **attrs, backend=backend)
            return
        with prepare(out, *inputs, **attrs, backend=backend) as prepared:
            assert prepared.run() is out
            check(out, inputs, case.attrs, "prepared run()")
            # New buffers of the same layout: fresh values, a fresh output.
            inputs2 = build(case.inputs, dtype, device, gen)
            out2 = empty_out(inputs2, case.attrs, dtype, device)
            assert prepared.run(*inputs2, out=out2) is out2
            check(out2, inputs2, case.attrs, "prepared run(new buffers)")
        with pytest.raises(RuntimeError, match="closed"):
            prepared.run()

    @pytest.mark.parametrize("err", cases.api_error_cases(), ids=lambda e: e.id)
    def test_bad_input(err, backend, device, gen):
        if err.needs_cuda and not torch.cuda.is_available():
            pytest.skip("needs a CUDA device to place tensors on two devices")
        inputs = build(err.inputs, err.dtype, device, gen)
        attrs = dict(err.attrs)
        if attrs.get("backend") == "other-device":
            attrs["backend"] = "nvidia" if device == "cpu" else "cpu"
        attrs.setdefault("backend", backend)
        if err.out is not None:
            attrs["out"] = bad_out(err.out, inputs, {k: v for k, v in err.attrs.items() if k != "backend"},
                                   device, gen)
        with pytest.raises(err.raises, match=err.match):
            api(*inputs, **attrs)

    def bad_out(kind, inputs, attrs, device, gen):
        if isinstance(kind, T):
            return make_tensor(kind, torch.float32, device, gen)
        shape = reference(op, *inputs, **attrs).shape
        if kind == "expanded":
            return torch.empty(1, device=device).expand(shape)
        if kind == "wrong_dtype":
            return torch.empty(shape, dtype=torch.float16, device=device)
        if kind == "other_device":
            return torch.empty(shape, device="cuda" if device == "cpu" else "cpu")
        if kind == "overlaps_input":  # the first input's memory, viewed with reversed strides
            strides, step = [], 1
            for size in shape:
                strides.append(step)
                step *= size
            return torch.as_strided(inputs[0], shape, strides, inputs[0].storage_offset())
        raise ValueError(kind)

    return test_matches_torch, test_out_variant, test_prepared, test_bad_input
