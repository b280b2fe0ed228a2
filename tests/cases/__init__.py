"""Operator test cases as plain data, one module per operator (the OpInfo idea).

Each module defines:
  API, PREPARE           names of the public function and its prepare_ form
  EXACT                  results must be bit-equal to torch's (no arithmetic rounding)
  reference(inputs, **attrs) -> float64 (or exact) torch result
  extra_atol(inputs, **attrs) -> widening of atol for f32 accumulation (sums)
  correctness_cases()    list[Case]
  api_error_cases()      list[ErrorCase]
  benchmark_cases()      list[BenchCase]
"""

import importlib

from operator_runtime.ops import OPS


def load(op: str):
    return importlib.import_module(f"cases.{op}")
