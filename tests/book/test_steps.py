"""The chapters' step kernels (ops/<op>/steps/, operator_course/book/steps.py): every step is
checked as a lab kernel is, on every lab input (random values, one element, odd lengths, tails,
rows longer than a block, empty tensors, softmax's -inf and large rows; matmul's K = 1, K = 0 and
long K, plus here sizes of 127 and past one 128 x 128 block tile). On a GPU natively; on a
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

from operator_course.book import steps
from operator_course.lab import cases
from operator_course.cuda import cuda_build

ROOT = Path(__file__).resolve().parents[2]
FILES = [s for s in steps.all_steps() if not s.production]
MATMUL = [s for s in FILES if s.op == "matmul"]
# The lab's matmul inputs stop at 100 rows and 37 columns: none crosses a 128-wide block tile (CUDA
# step 3, TileLang step 2), so a wrong second tile in M or N would pass them. These do cross:
# 127 everywhere, and M, N past 128 and 256 with a K tail.
PAST_ONE_TILE = [(127, 127, 127), (129, 257, 33)]
SM90 = {"kind": "cuda", "arch": "sm_90"}


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


@pytest.mark.parametrize("step", MATMUL, ids=lambda s: s.key)
def test_matmul_step_past_one_block_tile(step, monkeypatch, capsys):
    """The same check (fresh random inputs, guards around every tensor, each dtype of the device)
    on matmul shapes that cross block tiles: cases.SHAPES is the table lab_cases draws from."""
    if step.lang == "cuda" and not torch.cuda.is_available() and shutil.which("g++") is None:
        pytest.skip("the CPU path of CUDA kernels builds with g++")
    monkeypatch.setitem(cases.SHAPES, "matmul", PAST_ONE_TILE)
    steps.check(step, compile_for_gpu=False)
    assert "passed" in capsys.readouterr().out


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU every step is built for it natively")
@pytest.mark.parametrize("step", [s for s in MATMUL if s.lang == "tilelang"], ids=lambda s: s.key)
def test_tilelang_matmul_steps_lower_for_sm90(step):
    """Without a GPU the C target proves the semantics; lowering for sm_90 proves the GPU program
    exists (T.gemm on shared tiles that T.Parallel loads fill becomes wgmma there)."""
    from tilelang.tools.compile_only import compile_kernel_source

    source = compile_kernel_source(step.program()("float16", True), target=SM90)  # bf16 lowers the same way
    assert "__global__" in source
    assert ("wgmma" in source) == ("T.gemm(" in step.source()), "a T.gemm step runs on the tensor cores"


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
    from operator_course.lab import checks

    with pytest.raises(AssertionError):
        checks.check_cuda("copy", broken, own_launch=True, compile_for_gpu=False)


def test_a_broken_matmul_step_is_caught(monkeypatch):
    """A register-tile kernel that stores its 8 x 8 outputs without the column guard writes past
    the row's end at the right edge: the second block tile's shape reports it."""
    if not torch.cuda.is_available() and shutil.which("g++") is None:
        pytest.skip("the CPU path of CUDA kernels builds with g++")
    step = next(s for s in MATMUL if s.key == "matmul/cuda/03_register_tiles")
    broken = step.source().replace("if (row < m && col < n)", "if (row < m)")
    assert broken != step.source()
    from operator_course.lab import checks

    monkeypatch.setitem(cases.SHAPES, "matmul", PAST_ONE_TILE[1:])
    with pytest.raises(AssertionError):
        checks.check_cuda("matmul", broken, own_launch=True, compile_for_gpu=False)
