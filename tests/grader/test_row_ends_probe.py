"""Loads past the end of a row (issue 28). The TileLang checks of the row ops run a probe first
(judge.row_ends_probe): rows 0 and 1 hold the same values, row 2 is +inf and NaN. A kernel whose
row 1 comes out non-finite while row 0 stays finite read past the end of row 1; anything else
wrong is left to the ordinary inputs, whose messages the probe must not change. A Python `if` on
TileLang values in a helper the kernel calls gets its own hint (build_errors.py). The compiled
kernels behind both: tests/labs/mistakes/*_unguarded.py, reduce_sum_python_if_in_helper.py."""

from __future__ import annotations

import math

import pytest
import torch

from operator_course.lab.cases import reference
from operator_course.lab.judge import PROBE_ROW_LEN, ROW_ENDS, Wrong, judge, lab_cases
from operator_runtime_testing.operators import OPERATORS

ROW_OPS = tuple(op for op, r in OPERATORS.items() if r.kind == "rows")


def _probe(op):
    return lab_cases(op, "cpu", seed=0, lang="tilelang")[0]


def _buffer(op, case, values):
    buffer, out = case.output(op, "cpu")
    out.copy_(values)
    return buffer


def _right(op, case):
    return reference(op, *case.inputs).to(case.dtype)


@pytest.mark.parametrize("op", ROW_OPS)
def test_the_tilelang_checks_of_row_ops_start_with_the_probe(op):
    cases = lab_cases(op, "cpu", seed=0, lang="tilelang")
    probe = cases[0]
    assert probe.probe == ROW_ENDS and probe.shape == (3, PROBE_ROW_LEN) and probe.dtype == torch.float32
    x = probe.inputs[0]
    assert torch.equal(x[0], x[1]) and bool(x[0].isfinite().all())
    assert bool(x[2].isposinf().any()) and bool(x[2].isnan().any()) and not bool(x[2].isfinite().any())
    rest = cases[1:]
    assert not any(c.probe for c in rest)
    sizes = [math.prod(c.shape) for c in rest]
    assert sizes == sorted(sizes)  # the ordinary inputs keep their order: the smallest failing one first


# every operator that is not a row op, in TileLang, and every operator in CUDA (its CPU path checks loads)
ELSEWHERE = [(op, "tilelang") for op in OPERATORS if op not in ROW_OPS] + [(op, "cuda") for op in OPERATORS]


@pytest.mark.parametrize("op, lang", ELSEWHERE)
def test_no_probe_elsewhere(op, lang):
    assert not any(c.probe for c in lab_cases(op, "cpu", seed=0, lang=lang))


@pytest.mark.parametrize("op", ROW_OPS)
def test_a_right_answer_passes_the_probe_whatever_it_does_with_the_poison_row(op):
    probe = _probe(op)
    out = _right(op, probe)
    judge(op, "test", probe, _buffer(op, probe, out))
    out[2] = 0.0  # row 2 is the guard: not judged
    judge(op, "test", probe, _buffer(op, probe, out))


@pytest.mark.parametrize("op", ROW_OPS)
def test_a_load_past_the_row_end_fails_it_naming_the_cause(op):
    probe = _probe(op)
    out = _right(op, probe)
    out[1] = float("nan")
    with pytest.raises(Wrong) as e:
        judge(op, "test", probe, _buffer(op, probe, out))
    text = str(e.value)
    assert text.startswith(f"{op} (test) is wrong for shape ({3}, {PROBE_ROW_LEN}) float32: your kernel reads past "
                           "the end of the row.")
    assert f"Values beyond column {PROBE_ROW_LEN - 1} of row 1 reached its result" in text
    assert "T.if_then_else(k * TILE + j < row_len, X[row, k * TILE + j], identity)" in text
    assert bool(e.value.mask[1].all()) and not bool(e.value.mask[0].any())


@pytest.mark.parametrize("op", ROW_OPS)
@pytest.mark.parametrize("wrong", ["unwritten", "finite", "row0_nan"])
def test_other_mistakes_are_left_to_the_ordinary_inputs(op, wrong):
    """An output never written (all NaN), sums carried from row to row (finite, wrong), a row 0 that
    is NaN too: not the signature, so the probe says nothing and the next inputs speak."""
    probe = _probe(op)
    out = _right(op, probe)
    if wrong == "unwritten":
        out[:] = float("nan")
    elif wrong == "finite":
        out[1] = out[1] * 2 + 1
    else:
        out[0] = out[1] = float("nan")
    judge(op, "test", probe, _buffer(op, probe, out))


def test_the_hints_of_later_inputs_ignore_the_probe():
    cases = lab_cases("reduce_sum", "cpu", seed=0, lang="tilelang")
    long = next(c for c in cases if c.shape == (3, 70_001) and c.dtype == torch.float32)
    before = [c for c in cases[:cases.index(long)]]
    assert before[0].probe == ROW_ENDS
    out = _right("reduce_sum", long) + 1000.0  # every sum finite and wrong
    with pytest.raises(Wrong) as e:
        judge("reduce_sum", "test", long, _buffer("reduce_sum", long, out), passed=before)
    text = str(e.value)
    assert "rows up to 1023 long passed" in text and str(PROBE_ROW_LEN) not in text


# ---- a Python `if` on TileLang values --------------------------------------------------------------

def _explained(tmp_path, source: str) -> str:
    """explain()'s short text for the error ``source`` (a cell, run from a file as ipykernel does) raises."""
    pytest.importorskip("tilelang")
    import tilelang.language as T

    from operator_course.lab.build_errors import explain

    path = tmp_path / "cell.py"
    path.write_text(source)
    with pytest.raises(Exception) as e:
        exec(compile(source, str(path), "exec", dont_inherit=True), {"T": T})
    return explain(e.value, "copy (TileLang)", "building the float32 program")[0]


@pytest.mark.parametrize("line", ["    if j < n:\n        return 1\n    return 0\n",
                                  "    return 1 if j < n else 0\n",
                                  "    if j < n and j >= 0:\n        return 1\n    return 0\n"])
def test_a_python_if_on_tilelang_values_names_the_if_and_t_if_then_else(tmp_path, line):
    text = _explained(tmp_path, "n = T.dynamic('n', 'int64')\n\ndef load(j):\n" + line + "\nload(n - 1)\n")
    assert "line 4 of your cell" in text
    assert "a Python `if` (or `a if cond else b`) needs True or False while the program is built" in text
    assert "T.if_then_else(cond, a, b)" in text


@pytest.mark.parametrize("source, words", [
    ("n = T.dynamic('n', 'int64')\nok = n > 0 and n < 9\n", "combine conditions with T.And(a, b)"),
    ("n = T.dynamic('n', 'int64')\nm = max(n, 4)\n", "use T.max(a, b)"),
])
def test_and_or_and_max_keep_their_own_hints(tmp_path, source, words):
    text = _explained(tmp_path, source)
    assert words in text and "a Python `if`" not in text
