"""The operators of the course, one record each (``operators/<op>.py``, the type in record.py).

Tests, labs, chapter steps, benchmarks and the site test read an operator's facts from here
instead of keeping their own table per operator. The order is the runtime's
(``operator_runtime.ops.OPS``): the course's order, lab N is the N-th operator.

    from operator_runtime_testing.operators import OPERATORS, get
    get("softmax").lab_shapes
"""

from __future__ import annotations

import importlib

from operator_runtime.ops import OPS

from .record import KINDS, CudaLab, Operator

__all__ = ["KINDS", "OPERATORS", "CudaLab", "Operator", "chapter", "get", "lab_id", "with_steps"]


def _load(op: str) -> Operator:
    try:
        record = importlib.import_module(f"{__name__}.{op}").RECORD
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(f"operator {op!r} (operator_runtime.ops.OPS) has no record: write "
                                  f"python/operator_runtime_testing/operators/{op}.py (README: 'Adding a new "
                                  f"operator')") from e
    assert record.name == op, f"operators/{op}.py holds the record of {record.name!r}"
    return record


OPERATORS: dict[str, Operator] = {op: _load(op) for op in OPS}


def get(op: str) -> Operator:
    if op not in OPERATORS:
        raise ValueError(f"op must be one of {tuple(OPERATORS)}, not {op!r}")
    return OPERATORS[op]


def lab_id(op: str) -> str:
    """The lab notebook's name: labs/<lab_id>.ipynb, numbered in the course's order ("04_softmax")."""
    return f"{list(OPERATORS).index(op) + 1:02d}_{op}"


def chapter(op: str) -> str:
    """The operator's chapter, relative to the checkout (its page: the same with .html under _build/html)."""
    return f"book/ops/{op}.md"


def with_steps() -> tuple[str, ...]:
    """The operators whose chapters teach steps (ops/<op>/steps/)."""
    return tuple(op for op, r in OPERATORS.items() if r.has_steps)
