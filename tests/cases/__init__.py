"""Operator test cases as plain data, one module per operator (the OpInfo idea).

Each module defines:
  API, PREPARE           names of the public function and its prepare_ form
  correctness_cases()    list[Case]
  api_error_cases()      list[ErrorCase]
  benchmark_cases()      list[BenchCase]

What a case's result is compared with is the operator's record (operators/<op>.py:
reference_call, extra_atol_call, exact), read through the helpers below.
"""

import importlib

import torch

from operator_runtime.ops import OPS
from operator_runtime_testing.operators import get


def load(op: str):
    return importlib.import_module(f"cases.{op}")


def _on_cpu(args) -> list:
    return [a.cpu() if isinstance(a, torch.Tensor) else a for a in args]


def reference(op: str, *inputs, **attrs):
    """The float64 (copy: exact) answer of ort.<op>(*inputs, **attrs), computed on the CPU."""
    return get(op).reference_call(*_on_cpu(inputs), **attrs)


def extra_atol(op: str, *inputs, **attrs):
    """How far float32 accumulation may drift beyond the dtype's atol, for this call."""
    record = get(op)
    return record.extra_atol_call(*_on_cpu(inputs), **attrs) if record.extra_atol_call else 0.0


def exact(op: str) -> bool:
    """Results must be bit-equal to torch's (no arithmetic rounding)."""
    return get(op).exact
