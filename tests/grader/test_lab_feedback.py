"""What a student reads when a lab check fails: the smallest failing input first, which elements
are wrong and a hint keyed to the pattern (unwritten tail, whole rows, every element, the
numerically hard rows of softmax)."""

from __future__ import annotations

import math

import pytest
import torch

from operator_course.lab.cases import SPECIAL, reference
from operator_course.lab.judge import judge, lab_cases


def _right(op, case):
    return reference(op, *case.inputs).to(case.dtype)


def _buffer(op, case, values):
    """The guarded buffer a kernel that wrote ``values`` leaves behind."""
    buffer, out = case.output(op, "cpu")
    out.copy_(values)
    return buffer


def _fails(op, case, out, passed=()) -> str:
    with pytest.raises(AssertionError) as e:
        judge(op, "test", case, _buffer(op, case, out), passed=passed)
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
            judge(op, "test", case, _buffer(op, case, _right(op, case)))


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

    from operator_course.cuda import cuda_build

    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    source = ("\ntemplate <typename T>\n__global__ void copy_kernel(const T* x, T* y, int64_t n) {\n"
              "  int64_t i = blockIdx.x * blockDim.x + threadIdx.x\n  if (i < n) y[i] = x[i];\n}\n")
    with pytest.raises(AssertionError) as e:
        cuda_build.compile_check("copy", source)
    text = str(e.value)
    assert 'CUDA_SOURCE(5): error: expected a ";"' in text, text  # the `if` after the missing `;`


def test_writes_outside_the_output_land_in_a_guard_and_are_reported():
    from operator_course.lab.kernels import GUARD

    case = _case("copy", (1023,))
    buffer = _buffer("copy", case, _right("copy", case))
    buffer[GUARD + 1023 + 4] = 1.0  # five past the end: a tile without a tail guard
    buffer[GUARD - 2] = 1.0  # two before the start: a negative index
    with pytest.raises(AssertionError) as e:
        judge("copy", "test", case, buffer)
    text = str(e.value)
    assert "1 element(s) past the end" in text and "5 past its last element" in text
    assert "before the start" in text and "guard the tail" in text


def test_a_buffer_that_is_not_the_guarded_output_is_no_output():
    case = _case("copy", (7,))
    with pytest.raises(AssertionError, match="produced no output"):
        judge("copy", "test", case, _right("copy", case))  # the bare output, without its guards


def test_the_picture_pools_long_rows_and_marks_the_wrong_ones():
    from operator_course.lab import picture

    mask = torch.zeros(100, 5000, dtype=torch.bool)
    mask[3, 4000:] = True
    cells = picture.pooled(mask)
    assert cells.shape[0] <= picture.MAX_ROWS and cells.shape[1] <= picture.MAX_COLS
    assert cells.sum() > 0 and cells[1].any() and not cells[0].any() and not cells[2:].any()
    assert not cells[1, : cells.shape[1] * 3999 // 5000].any()  # the left part of the row is right
    fig = picture.strip(mask, "softmax: wrong elements")
    assert fig.axes[0].images and fig.axes[0].get_title() == "softmax: wrong elements"
    assert picture.pooled(torch.ones(7, dtype=torch.bool)).shape == (1, 7)


def test_matmul_feedback_names_the_part_of_the_tiled_kernel_that_is_wrong():
    for case in lab_cases("matmul", "cpu"):  # a right answer passes, K = 0 and K = 1000 included
        judge("matmul", "test", case, _buffer("matmul", case, _right("matmul", case)))
    case = _case("matmul", (33, 65, 17))
    out = _right("matmul", case)
    out[32:] = float("nan")  # the bottom edge tile (rows past one 32-row tile) never stored
    text = _fails("matmul", case, out, passed=[_case("matmul", (7, 9, 13))])
    assert "65 of 2145 elements are wrong" in text and "only the rows past row 32 are wrong" in text
    assert "edge is partial" in text
    out = _right("matmul", case)
    out[:, 64:] += 1.0  # the right edge
    assert "only the columns past column 64 are wrong" in _fails("matmul", case, out)
    zero_k = _case("matmul", (5, 6, 0))  # nothing stored: the grid (N // BN blocks) or a store inside the K loop
    text = _fails("matmul", zero_k, torch.full((5, 6), float("nan")))
    assert "T.ceildiv(N, BN)" in text and "store C even when the K loop runs no iteration" in text
    one = _case("matmul", (1, 1, 1))  # C all 0: a K loop of K // BK = 0 iterations
    assert "no product reached C" in _fails("matmul", one, torch.zeros(1, 1), passed=[])
    out = _right("matmul", case)
    out[:, 1:] += 1.0  # from column 1 on: an index off by one, not a partial edge tile
    assert "edge is partial" not in _fails("matmul", case, out)
    long_k = _case("matmul", (19, 23, 1000))
    a, b = long_k.inputs
    first_tiles = (a[:, :992].double() @ b[:992].double()).float()  # the last, partial K tile lost
    text = _fails("matmul", long_k, first_tiles, passed=[_case("matmul", (100, 37, 129))])
    assert "every element is wrong" in text.lower() and "inputs with K up to 129 passed" in text


def _f16_case(shape):
    return next(c for c in lab_cases("matmul", "cpu") if c.shape == shape and c.dtype == torch.float16)


def test_a_16_bit_accumulator_is_named_without_a_float32_twin():
    """T.gemm on a GPU takes 16-bit inputs only, so "the float32 input passed" cannot be the clue
    there: errors small next to the sum's spread, on the longer K only, still name the accumulator;
    a lost K tile (errors of whole terms) does not."""
    long_k, short_k = _f16_case((19, 23, 1000)), _f16_case((33, 65, 17))
    a, b = long_k.inputs
    acc = torch.zeros(19, 23, dtype=torch.float16)
    for kk in range(1000):  # what a float16 accumulator does: round after every term
        acc = (acc.float() + a[:, kk:kk + 1].float() * b[kk:kk + 1].float()).half()
    text = _fails("matmul", long_k, acc, passed=[short_k])
    assert "only the longer K fails (K up to 17 passed in float16)" in text
    assert "T.gemm accumulates in its third argument's dtype" in text
    lost_tile = (a[:, :992].double() @ b[:992].double()).half()
    assert "accumulates" not in _fails("matmul", long_k, lost_tile, passed=[short_k])
    assert "accumulates" not in _fails("matmul", long_k, acc)  # nothing shorter passed: no evidence


def test_tilelang_on_a_gpu_gets_the_shapes_tma_can_describe():
    """16-byte rows (N and K multiples of 8 in 16 bits), no empty operand, tails kept."""
    gpu = {c.shape for c in lab_cases("matmul", "cuda", lang="tilelang")}
    assert all(m and n % 8 == 0 and k % 8 == 0 and k for m, n, k in gpu)
    assert {(1, 8, 8), (7, 16, 16), (33, 72, 24), (19, 24, 1000)} <= gpu
    assert any(m % 2 for m, _, _ in gpu) and any(n % 64 for _, n, _ in gpu) and any(k % 64 for _, _, k in gpu)
    assert {c.shape for c in lab_cases("matmul", "cuda")} >= {(5, 6, 0), (0, 8, 5)}  # CUDA keeps them
    assert (5, 6, 0) in {c.shape for c in lab_cases("matmul", "cpu", lang="tilelang")}  # the C target too


def test_a_gpu_failure_is_explained_by_the_cpu_path_when_it_finds_a_fault():
    """On a GPU a race shows only as wrong numbers; check_cuda then runs the same source on the CPU
    execution path, whose checker names the race (this is that second half, on any machine)."""
    import shutil
    from operator_course.lab import checks
    if shutil.which("g++") is None or shutil.which("nvcc") is None:
        pytest.skip("the CPU execution path needs g++ and nvcc")
    from pathlib import Path
    racy = {}  # the catalogue's matmul without __syncthreads (tests/labs/mistakes)
    exec((Path(__file__).parents[1] / "labs" / "mistakes" / "cuda_matmul_no_syncthreads.py").read_text(), racy)
    found = checks._fault_on_cpu_path("matmul", racy["CUDA_SOURCE"], False)
    assert found is not None and "data race on shared memory" in found and "__syncthreads" in found
    fixed = racy["CUDA_SOURCE"].replace("    for (int kk = 0;", "    __syncthreads();\n    for (int kk = 0;")
    fixed = fixed.replace("    }\n  }\n  for (int i", "    }\n    __syncthreads();\n  }\n  for (int i")
    assert fixed.count("__syncthreads") == 2
    assert checks._fault_on_cpu_path("matmul", fixed, False) is None  # a right kernel: nothing to add


def test_a_bfloat16_gemm_accumulator_that_nvcc_rejects_is_explained():
    """On an H200, T.gemm with a bfloat16 accumulator fails in nvcc (TileLang's mma_sync has no such
    configuration); the student reads nvcc's error and the accumulator hint, not nvcc's command line,
    nor a line of the CUDA source TileLang appends (its launch-error strings read "error: %s")."""
    from operator_course.lab.build_errors import explain
    error = RuntimeError(
        "Compilation Failed! ['/usr/local/cuda/bin/nvcc', '-std=c++20', '--shared', '/tmp/x.cu']\n"
        "/tmp/gpu-site/tilelang/src/tl_templates/cuda/instruction/mma.h(282): error: static assertion failed "
        "with \"tl::mma_sync: unsupported configuration\"\n"
        "  detected during instantiation of ... [with AType=tl::DataType::kBFloat16, CType=tl::DataType::kBFloat16]\n"
        "2 errors detected in the compilation of \"/tmp/x.cu\".\n"
        "extern \"C\" int call(half_t* A) {\n"
        "    snprintf(error_buf, ERROR_BUF_SIZE, \"kernel matmul_kernel launch error: %s\", 16384, msg);\n}\n")
    short, full = explain(error, "matmul (TileLang)", "compiling the bfloat16 program for the GPU")
    assert "nvcc could not compile" in short and "unsupported configuration" in short
    assert "%s" not in short
    assert "/usr/local/cuda/bin/nvcc" not in short and "/usr/local/cuda/bin/nvcc" in full
    assert "T.gemm accumulates in its third argument's dtype" in short and '"float32"' in short


def test_nvccs_output_reaches_the_error_tilelang_raises():
    """TileLang 0.1.15 leaves nvcc's output on the process's stderr (its error holds the command and
    the source only): while a lab program compiles, the output is captured for the error instead."""
    from tilelang.jit.adapter import libgen

    from operator_course.lab.kernels import _nvcc_output_in_errors
    before = libgen.subprocess
    with _nvcc_output_in_errors():
        done = libgen.subprocess.run(["sh", "-c", "echo 'x.cu(3): error: boom' >&2; exit 1"])
    assert done.returncode == 1 and b"x.cu(3): error: boom" in done.stdout
    assert libgen.subprocess is before
