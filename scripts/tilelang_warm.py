#!/usr/bin/env python3
"""Compile, in parallel, every TileLang GPU kernel that the row ops' tests and benchmarks will ask
for, so that pytest and tests/run_ops.py (one process, one compile at a time, 20-40 s each on an
H200 host) find them in TileLang's disk cache ($TILELANG_CACHE_DIR) instead.

The kernels are those the backend picks (tilelang_backend._layout, on the GPU) for the op's
correctness cases (tests/cases/<op>.py) in every dtype, its benchmark cases, and the long column
sums of tests/runtime/ops/test_reduce_sum.py: nothing is run, only compiled, one process per kernel.

    python3 scripts/tilelang_warm.py [--ops reduce_sum,softmax] [--jobs N]
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DTYPES = ("float32", "float16", "bfloat16")
ERROR_LINE = re.compile(r"\): error|fatal|^\w*Error:")  # nvcc's and TVM's, not the source's error_buf


def _attrs(op: str, attrs: dict) -> tuple:
    return (attrs["dim"], int(attrs.get("keepdim", False))) if op == "reduce_sum" else (attrs["dim"],)


def kernels_for(op: str) -> set[tuple]:
    """(op, dtypes, extra, program) of every GPU kernel the op's cases pick (shapes on the CPU)."""
    import torch

    from operator_runtime._internal import tilelang_backend as tb
    from operator_runtime.ops import SIGNATURES
    from operator_runtime_testing.tensors import make_tensor

    sys.path.insert(0, str(ROOT / "tests"))
    cases = importlib.import_module(f"cases.{op}")
    calls = []  # (x, attrs dict, dtype name)
    gen = torch.Generator().manual_seed(0)
    for case in cases.correctness_cases():
        if case.tilelang:  # a case the backend refuses
            continue
        for dtype, name in zip((torch.float32, torch.float16, torch.bfloat16), DTYPES):
            calls.append((make_tensor(case.inputs[0], dtype, "cpu", gen), case.attrs, name))
    dtype_names = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}
    for bench in cases.benchmark_cases():
        calls.append((torch.empty(bench.shape, dtype=bench.dtype), bench.attrs, dtype_names[bench.dtype]))
    if op == "reduce_sum":
        calls += [(torch.empty(shape), {"dim": 0}, "float32") for shape in cases.LONG_SUMS]
    if op == "softmax":  # tests/runtime/ops/test_tilelang_layouts.py: dims that do not merge (rank 8)
        calls.append((torch.empty(2, 3, 4, 5, 3).permute(4, 2, 0, 3, 1), {"dim": 2}, "float32"))
    found = set()
    for x, attrs, name in calls:
        out = x.sum(**attrs) if op == "reduce_sum" else torch.empty_like(x)
        if out.numel() == 0:  # nothing is compiled for an empty output
            continue
        layout = tb._layout(SIGNATURES[op], out, (x,), _attrs(op, attrs), True)
        found.add((op, (name,), tuple(layout.extra), layout.program))
    return found


def compile_one(kernel: tuple) -> float:
    from operator_runtime._internal import tilelang_backend as tb

    t0 = time.perf_counter()
    op, dtypes, extra, program = kernel
    tb.compiled(op, dtypes, True, extra, program)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", default="reduce_sum,softmax")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    args = parser.parse_args()
    kernels = sorted(set().union(*(kernels_for(op) for op in args.ops.split(","))), key=str)
    print(f"{len(kernels)} kernels, {args.jobs} processes", flush=True)
    t0, failed = time.perf_counter(), 0
    # spawn: the workers share no CUDA or TVM state with this process
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(compile_one, k): k for k in kernels}
        for future in as_completed(futures):
            op, dtypes, extra, program = futures[future]
            try:
                print(f"{future.result():6.1f} s  {program} {dtypes[0]} {extra}", flush=True)
            except Exception as e:  # report every failure, then fail
                failed += 1
                # a failed nvcc run's message is the command, its errors, then the whole source
                errors = [line for line in str(e).splitlines() if ERROR_LINE.search(line)][:8]
                why = "\n  ".join(errors) if errors else str(e)[-2000:]
                print(f"FAILED {program} {dtypes[0]} {extra}: {type(e).__name__}:\n  {why}", flush=True)
    print(f"{len(kernels) - failed}/{len(kernels)} compiled in {time.perf_counter() - t0:.0f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
