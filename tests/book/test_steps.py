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
from operator_runtime_testing.operators import OPERATORS

ROOT = Path(__file__).resolve().parents[2]
FILES = [s for s in steps.all_steps() if not s.production]
MATMUL = [s for s in FILES if s.op == "matmul"]
# The lab's matmul inputs stop at 100 rows and 37 columns: none crosses a 128-wide block tile (CUDA
# step 3, TileLang step 2), so a wrong second tile in M or N would pass them. These do cross:
# 127 everywhere, and M, N past 128 and 256 with a K tail.
PAST_ONE_TILE = [(127, 127, 127), (129, 257, 33)]
SM90 = {"kind": "cuda", "arch": "sm_90"}
ATTENTION = [s for s in FILES if OPERATORS[s.op].kind == "attention"]
# The lab's call, which steps.check runs, is causal self-attention only; scripts/step_bench.py also
# times full attention and decode (Sq = 1 against many keys) through each step's general
# attention<T>(..., sq, sk, d, causal, scale, stream). These cross-attention shapes (B, H, Sq, Sk, D)
# check that call on the CPU: Sq < Sk, Sq > Sk past a 64-row query tile and a 32-key tile, one query
# against keys past two tiles, and no keys at all (torch's zeros). Sq tells the cases apart.
CROSS = [(1, 2, 5, 9, 16), (2, 1, 70, 33, 32), (1, 2, 1, 130, 64), (1, 1, 3, 0, 8)]
LAB_CALL = "attention<T>(q, k, v, o, bh, s, s, d, true, default_scale(d), stream);"


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


def _guarded(t: torch.Tensor, pad: int = 64) -> torch.Tensor:
    """``t`` inside a NaN-filled buffer: a read past either end makes the output NaN (and the CPU
    path reports it as out of bounds)."""
    buffer = torch.full((t.numel() + 2 * pad,), float("nan"), dtype=t.dtype)
    view = buffer[pad:pad + t.numel()].view(t.shape)
    view.copy_(t)
    return view


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("step", ATTENTION, ids=lambda s: s.key)
def test_attention_step_general_call(step, causal):
    """The general call the step bench times: full and causal (torch's top-left mask), Sq != Sk,
    decode and Sk = 0, against torch's float64 answer. CUDA through the CPU path, with the lab's
    call replaced by the general one (its Sk chosen by Sq, the only length the lab's entry point
    passes); TileLang through its C target, compiled for the mask."""
    from operator_course.lab.kernels import compile_tilelang, run_tilelang

    if step.lang == "cuda":
        if not torch.cuda.is_available() and shutil.which("g++") is None:
            pytest.skip("the CPU path of CUDA kernels builds with g++")
        from operator_course.cuda import cuda_cpu

        assert LAB_CALL in step.source(), "a CUDA attention step ends with the lab's call of attention<T>"
        sk_of_sq = " : ".join(f"s == {sq} ? {sk}" for _, _, sq, sk, _ in CROSS) + " : s"
        source = step.source().replace(LAB_CALL, f"attention<T>(q, k, v, o, bh, s, {sk_of_sq}, d, "
                                                  f"{str(causal).lower()}, default_scale(d), stream);")
        lab = cuda_cpu.build(step.op, source, own_launch=True)
        run = lambda q, k, v, out: lab.run([q, k, v], out, f"{step.key} is wrong")  # noqa: E731
    else:
        kernel = compile_tilelang(step.program()("float32", False, causal), "cpu")
        run = lambda q, k, v, out: run_tilelang(kernel, step.op, [q, k, v], out)  # noqa: E731
    gen = torch.Generator().manual_seed(31)
    for b, h, sq, sk, d in CROSS:
        q, k, v = (_guarded(torch.randn(size, generator=gen)) for size in ((b, h, sq, d), (b, h, sk, d), (b, h, sk, d)))
        out = _guarded(torch.full((b, h, sq, d), float("nan")))
        run(q, k, v, out)
        expected = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                                                    is_causal=causal)
        torch.testing.assert_close(out.double(), expected, rtol=1e-4, atol=1e-5,
                                   msg=lambda m: f"{step.key}, causal={causal}, shape {(b, h, sq, sk, d)}: {m}")


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU every step is built for it natively")
@pytest.mark.parametrize("step", [s for s in ATTENTION if s.lang == "tilelang"], ids=lambda s: s.key)
def test_tilelang_attention_steps_lower_for_sm90(step):
    """The C target proves the semantics; lowering for sm_90 proves the GPU programs the step bench
    compiles exist, for both masks (CUDA cores only: no T.gemm before the production kernel)."""
    from tilelang.tools.compile_only import compile_kernel_source

    for causal in (False, True):
        source = compile_kernel_source(step.program()("bfloat16", True, causal), target=SM90)
        assert "__global__" in source and "wgmma" not in source


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
