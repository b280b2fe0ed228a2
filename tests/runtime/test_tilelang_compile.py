"""Every TileLang GPU kernel is lowered for sm_90 on every machine (no GPU needed): TileLang
generates the CUDA source and nvcc compiles it, so a lowering or compile error reaches CI
before it reaches a student. Also: TileLang's compile logs stay off stdout."""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tilelang", reason="the tilelang backend needs the tilelang package (requirements.txt)")

from operator_runtime._internal import tilelang_backend  # noqa: E402

DTYPES = ("float32", "float16", "bfloat16")

def strategy_variants(op: str) -> list[tuple]:
    """Every kernel the op's gpu_strategy can pick (GPU_VARIANTS), each in one dtype, rotating
    through the three."""
    variants = tilelang_backend.kernels(op).GPU_VARIANTS
    return [(op, (DTYPES[i % 3],), v) for i, v in enumerate(variants)]


PROGRAMS = ([("copy", pair, ()) for pair in itertools.product(DTYPES, DTYPES)]
            + [("vector_add", (d,), ()) for d in DTYPES]
            + strategy_variants("reduce_sum") + strategy_variants("softmax")
            + [("matmul", (d,), v) for d in ("float16", "bfloat16") for v in tilelang_backend.kernels("matmul").GPU_VARIANTS]
            # (rank, D tile, Dv tile): f16/bf16 only (T.gemm), every head-dim tile
            + [("scaled_dot_product_attention", (("float16", "bfloat16")[i % 2],), v)
               for i, v in enumerate(tilelang_backend.kernels("scaled_dot_product_attention").GPU_VARIANTS)])
# the strided kernels (any dim, strides, broadcasting): every op in rank 3, dtypes rotating; rank 8
# differs only in the unrolled offsets, so one op
STRIDED_PROGRAMS = [("copy", ("bfloat16", "float32"), ("strided", 3)), ("vector_add", ("float16",), ("strided", 3)),
                    ("reduce_sum", ("bfloat16",), ("strided", 3)), ("softmax", ("float32",), ("strided", 3)),
                    ("copy", ("float16", "float16"), ("strided", 8)),
                    ("reduce_sum", ("float16",), ("columns",)), ("softmax", ("bfloat16",), ("columns",)),
                    # columns cut into pieces of rows: float32 partials, then their sums
                    ("reduce_sum", ("bfloat16",), ("columns", True)), ("reduce_sum", ("float16",), ("partials",)),
                    ("reduce_sum", ("float32",), ("row_pieces",)),
                    ("vector_add", ("float32",), ("broadcast", 1, 1)), ("vector_add", ("float16",), ("broadcast", 0, 1)),
                    # attention's dense program (contiguous (B, H, S, D), TMA tiles): each head dim
                    ("scaled_dot_product_attention", ("float16",), ("dense", 64)),
                    ("scaled_dot_product_attention", ("bfloat16",), ("dense", 128))]
NVCC_PROGRAMS = [("copy", ("bfloat16", "float16"), ()), ("vector_add", ("bfloat16",), ()),
                 ("reduce_sum", ("float16",), (1024, 8)), ("reduce_sum", ("float32",), ("columns",)),
                 ("reduce_sum", ("bfloat16",), (256, 8, 1)), ("reduce_sum", ("bfloat16",), ("columns", True)),
                 ("reduce_sum", ("bfloat16",), ("partials",)), ("reduce_sum", ("bfloat16",), ("row_pieces",)),
                 ("vector_add", ("bfloat16",), ("broadcast", 1, 0)),
                 ("softmax", ("float32",), ("cached", 16384)),
                 ("softmax", ("bfloat16",), ("online", 1024)), ("softmax", ("bfloat16",), ("strided", 3)),
                 ("matmul", ("float16",), ("square",)), ("scaled_dot_product_attention", ("bfloat16",), ("dense", 128))]
SM90 = {"kind": "cuda", "arch": "sm_90"}
WARP_SPECIALIZED = ("matmul", "scaled_dot_product_attention")


def program_id(program) -> str:
    op, dtypes, extra = program
    return "-".join((op, *dtypes, *map(str, extra)))


@functools.cache  # a program both lowered and compiled with nvcc is lowered once (3-15 s each on the CPU)
def cuda_source(op: str, dtypes: tuple[str, ...], extra: tuple) -> str:
    from tilelang.tools.compile_only import compile_kernel_source

    factory = tilelang_backend.contiguous_program(op)
    if extra[:1] == ("strided",):  # ("strided", rank): the op's strided program
        factory, extra = tilelang_backend.strided_program(op), extra[1:]
    elif extra[:1] == ("columns",):  # the op's GPU column-sum program (a dim that is not innermost)
        factory, extra = tilelang_backend.columns_program(op), extra[1:]
    elif extra[:1] in (("partials",), ("row_pieces",), ("broadcast",)):  # reduce_sum's pieces, vector_add's rows
        factory, extra = f"{op}_{extra[0]}_program", extra[1:]
    elif extra[:1] == ("dense",):  # ("dense", D): attention's program for contiguous operands
        factory, extra = f"{op}_dense_program", extra[1:]
    program = getattr(tilelang_backend.kernels(op), factory)(*dtypes, True, *extra)
    return compile_kernel_source(program, target=SM90)


@pytest.mark.parametrize("program", PROGRAMS + STRIDED_PROGRAMS, ids=program_id)
def test_gpu_kernel_lowers_for_sm90(program):
    source = cuda_source(*program)
    assert "__global__" in source and "int64_t" in source, "expected a CUDA kernel with 64-bit indexing"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile the generated CUDA source")
@pytest.mark.parametrize("program", NVCC_PROGRAMS, ids=program_id)
def test_gpu_kernel_compiles_with_nvcc(program, tmp_path):
    op = program[0]
    import tilelang

    root = Path(tilelang.__file__).parent
    source = tmp_path / f"{op}.cu"
    source.write_text(cuda_source(*program))
    result = subprocess.run(
        # matmul's and attention's warp-specialized wgmma kernels reallocate registers per warpgroup
        # (setmaxnreg): only sm_90a has it, and its templates assert so outside device code, so they are
        # compiled as TileLang compiles them on a H100/H200: for sm_90a, device code only (-cubin).
        ["nvcc", "-std=c++17", *(["-arch=sm_90a", "-cubin", "-Xptxas=-v"] if op in WARP_SPECIALIZED else ["-arch=sm_90", "-c"]),
         "-DENABLE_BF16", "-w", str(source), "-o", str(tmp_path / "k.o"),
         f"-I{root / 'src'}", f"-I{root / '3rdparty' / 'cutlass' / 'include'}"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_compiling_prints_nothing_on_stdout(tmp_path):
    """A notebook cell that compiles a kernel must show the same output as one that does not."""
    code = ("import torch, operator_runtime as ort\n"
            "x = torch.randn(37)\n"
            "y = ort.vector_add(x, x, backend='tilelang')\n"
            "assert torch.equal(y, x + x)\n")
    env = {"TILELANG_CACHE_DIR": str(tmp_path / "cache")}  # a cold cache: the kernel really compiles


    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env},
                            timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == "", f"stdout should be empty, got: {result.stdout[:500]}"
