"""The chapters' step kernels (ops/<op>/steps/, operator_runtime_testing/steps.py): every step is
checked as a lab kernel is, on every lab input (random values, one element, odd lengths, tails,
rows longer than a block, empty tensors, softmax's -inf and large rows). On a GPU natively; on a
CPU machine CUDA steps run through the CPU path (g++ against our CUDA header, every access
checked) and TileLang steps through TileLang's C target. Builds are cached by source hash.
"""

from __future__ import annotations

import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from operator_runtime_testing import steps
from operator_runtime_testing.lab import cuda_build

ROOT = Path(__file__).resolve().parents[1]
FILES = [s for s in steps.all_steps() if not s.production]


def test_every_op_has_three_steps_per_language_ending_in_production():
    for op in steps.OPS:
        for lang in steps.LANGS:
            found = steps.steps(op, lang)
            assert len(found) >= 3, (op, lang, [s.name for s in found])
            assert found[-1].production and found[-1].path.is_file(), found[-1]
            assert [s.number for s in found] == list(range(1, len(found) + 1))
            assert all(s.title and not s.title.startswith("Step") for s in found)


def test_cmake_does_not_build_the_steps_into_the_libraries():
    """CMake globs ops/*/*.cc and ops/*/<backend>/*: a step directory is no backend's."""
    globs = re.findall(r"ops/\*/[^\s)]*", (ROOT / "CMakeLists.txt").read_text())
    assert globs and not any("steps" in g for g in globs), globs
    backends = set(re.findall(r"camp_add_backend\((\w+)", (ROOT / "CMakeLists.txt").read_text()))
    assert "steps" not in backends


@pytest.mark.parametrize("step", FILES, ids=lambda s: s.key)
def test_step_is_correct(step, capsys):
    if step.lang == "cuda" and not torch.cuda.is_available() and shutil.which("g++") is None:
        pytest.skip("the CPU path of CUDA kernels builds with g++")
    steps.check(step, compile_for_gpu=False)  # raises AssertionError with the first wrong input
    assert "passed" in capsys.readouterr().out


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU every step is built for it natively")
def test_cuda_steps_build_for_sm90():
    """Without a GPU the CPU path proves the semantics; nvcc proves the same text builds for the H200."""
    try:
        cuda_build._nvcc()
    except cuda_build.NoCompiler as e:
        pytest.skip(str(e))
    cuda = [s for s in FILES if s.lang == "cuda"]
    with ThreadPoolExecutor(max(4, os.cpu_count() or 1)) as pool:  # nvcc is a process: threads overlap them
        list(pool.map(lambda s: cuda_build.compile_check(s.op, s.source(), own_launch=True), cuda))


def test_a_broken_step_is_caught():
    """The check is not vacuous: a grid-stride loop that runs one element too far is reported."""
    if not torch.cuda.is_available() and shutil.which("g++") is None:
        pytest.skip("the CPU path of CUDA kernels builds with g++")
    step = next(s for s in FILES if s.key == "copy/cuda/02_grid_stride")
    broken = step.source().replace("i < n; i += stride", "i <= n; i += stride")
    assert broken != step.source()
    from operator_runtime_testing.lab import checks

    with pytest.raises(AssertionError):
        checks.check_cuda("copy", broken, own_launch=True, compile_for_gpu=False)
