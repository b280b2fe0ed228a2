"""What a student reads when a lab check fails: the smallest failing input first, which elements
are wrong and a hint keyed to the pattern (unwritten tail, whole rows, every element, the
numerically hard rows of softmax)."""

from __future__ import annotations

import math

import pytest
import torch

from operator_runtime_testing.lab.cases import SPECIAL, reference
from operator_runtime_testing.lab.judge import judge, lab_cases


def _right(op, case):
    return reference(op, *case.inputs).to(case.dtype)


def _fails(op, case, out) -> str:
    with pytest.raises(AssertionError) as e:
        judge(op, "test", case, out)
    return str(e.value)


def _case(op, shape):
    return next(c for c in lab_cases(op, "cpu") if c.shape == shape and c.dtype == torch.float32)


def test_cases_go_from_small_to_large_and_softmax_draws_the_hard_rows():
    cases = lab_cases("softmax", "cpu")
    sizes = [math.prod(c.shape) for c in cases]
    assert sizes == sorted(sizes)
    special = [c for c in cases if c.shape == SPECIAL["softmax"]]
    assert len(special) == 2  # float32 and float16 on a CPU
    x = special[0].inputs[0]
    assert x[2].isneginf().all() and x[1].isneginf().any() and not x[1].isneginf().all()
    assert x[0].abs().max() > 100


def test_a_correct_answer_passes_every_case_the_hard_rows_included():
    for op in ("copy", "reduce_sum", "softmax"):
        for case in lab_cases(op, "cpu"):
            judge(op, "test", case, _right(op, case))


def test_an_unwritten_tail_says_so():
    case = _case("copy", (1023,))
    out = _right("copy", case)
    out[-5:] = float("nan")
    text = _fails("copy", case, out)
    assert "5 of 1023 elements are wrong" in text and "never wrote" in text
    assert "Only the tail is wrong" in text and "T.ceildiv" in text


def test_whole_rows_and_every_element():
    case = _case("softmax", (33, 1023))
    out = _right("softmax", case)
    out[[3, 7]] = 0.5
    assert "Whole rows are wrong: rows [3, 7]" in _fails("softmax", case, out)
    swapped = torch.softmax(case.inputs[0].double(), 0).float()
    assert "Every element is wrong" in _fails("softmax", case, swapped)


@pytest.mark.parametrize("row, words", [(0, "max trick"), (1, "-inf - -inf = NaN"), (2, "fully masked row")])
def test_the_hard_softmax_rows_name_the_cause(row, words):
    case = _case("softmax", SPECIAL["softmax"])
    out = _right("softmax", case)
    out[row] = 0.0 if row == 2 else float("nan")
    text = _fails("softmax", case, out)
    assert f"Row {row}:" in text and words in text


def test_nvcc_errors_name_the_line_of_the_students_source():
    import shutil

    from operator_runtime_testing.lab import cuda_build

    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    source = ("\ntemplate <typename T>\n__global__ void copy_kernel(const T* x, T* y, int64_t n) {\n"
              "  int64_t i = blockIdx.x * blockDim.x + threadIdx.x\n  if (i < n) y[i] = x[i];\n}\n")
    with pytest.raises(AssertionError) as e:
        cuda_build.compile_check("copy", source)
    text = str(e.value)
    assert 'CUDA_SOURCE(5): error: expected a ";"' in text, text  # the `if` after the missing `;`
