"""The nvidia matmul's workspace plan (ops/matmul/nvidia/matmul_workspace_plan.h), host code the GPU runs before
its tensor-core kernels, checked on the CPU: tests/runtime/native/matmul_workspace_plan.cc walks 16-bit operands
of many shapes (1, odd, K = 1995, N = 83), batches (repeated or not) and layouts (either dim contiguous, none,
padded leading strides). An operand is copied exactly when no layout of it has 16-byte rows (and the call is
large enough); the copy, simulated as the pack kernel walks it, read through the packed plan gives every
element and never a pad, inside its part of the workspace. Split-K: every k-tile in one non-empty split, and
splits only where its rules allow. The skinny kernel: taken for outputs of at most 8 rows or columns, K
covered once by its splits, the transposed plan naming the same elements. A GPU run checks the kernels."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_packing_reads_every_element_and_no_pad_and_splits_cover_k(tmp_path):
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("needs a C++ compiler (the runtime's build needs one too)")
    exe = tmp_path / "matmul_workspace_plan"
    includes = [f"-I{ROOT / d}" for d in ("include", "runtime", "ops/matmul", "ops/matmul/nvidia")]
    subprocess.run([compiler, "-O2", "-std=c++17", "-Wall", *includes, str(ROOT / "tests/runtime/native/matmul_workspace_plan.cc"),
                    "-o", str(exe)], check=True)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "FAIL" not in run.stdout, run.stdout[-3000:]
    assert int(run.stdout.split("checked ")[-1]) > 3000, run.stdout
