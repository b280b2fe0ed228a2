#!/usr/bin/env python3
"""Sweep the element-wise launch shapes behind issue 16's last bandwidth misses, on a GPU:
nvidia vector_add at 2^28 (0.92x torch in data/bench/h200.json, while TileLang's plain kernel
measured 1.00x) and TileLang copy at 2^28 (0.91x; nvidia's copy 0.99x).

    python3 scripts/elementwise_sweep.py [--json FILE] [--quick]

nvidia vector_add: one child process per OPRT_VECTOR_ADD_STRATEGY (the kernel reads it once
per process; see ops/vector_add/nvidia/vector_add_cuda.cu), each timing the prepared op
beside torch.add(out=) on the same tensors. TileLang copy: copy_program compiled with each
elements-per-block value (ops/copy/tilelang/copy.py), timed beside torch's copy_. Each result
is checked against torch before it is timed (a wrong one is reported, never ranked), and timed
as tests/run_ops.py times (operator_runtime_testing.timing: warm-up, CUDA events, median).
One line per setting: ms, GB/s (read and write once) and torch ms / ours (above 1: faster).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python")]

VECTOR_ADD_STRATEGIES = ("stream4", "plain4", "plain2", "plain1", "old")
# (program of ops/copy/tilelang/copy.py, elements per block); plain copy_program at 1024 is today's
# fallback for unaligned pointers (block 2048: 0.93x, 4096: 0.93x, 8192: 0.88x at 2^28 f32)
COPY_VARIANTS = (("copy_program", 1024), ("copy_aligned_program", 2048), ("copy_aligned_program", 4096),
                 ("copy_aligned_program", 8192))
SIZES = {"full": [(1 << 28, "float32"), (1 << 28, "bfloat16"), (1 << 24, "float32")],
         "quick": [(1 << 28, "float32")]}


def timed(fn) -> float:
    from operator_runtime_testing.timing import time_callable

    return time_callable(fn, "cuda").median_ms


def line(what: str, n: int, dtype: str, ms: float, torch_ms: float, nbytes: int) -> dict:
    print(f"{what:<28}{n:>11} {dtype:<9}{ms:9.4f} ms {nbytes / ms / 1e6:8.0f} GB/s  x torch {torch_ms / ms:5.2f}"
          f"  (torch {torch_ms:.4f} ms)", flush=True)
    return {"what": what, "n": n, "dtype": dtype, "ms": ms, "torch_ms": torch_ms, "bytes": nbytes}


def vector_add_child(strategy: str, sizes: list) -> list[dict]:
    """In a child whose OPRT_VECTOR_ADD_STRATEGY is `strategy`: time it at each size."""
    import torch

    import operator_runtime as ort

    rows = []
    for n, dtype in sizes:
        a, b = (torch.randn(n, device="cuda", dtype=getattr(torch, dtype)) for _ in range(2))
        out, ref = torch.empty_like(a), torch.empty_like(a)
        prepared = ort.prepare_vector_add(out, a, b, backend="nvidia")
        prepared.run()
        torch.add(a, b, out=ref)
        torch.cuda.synchronize()
        if not torch.equal(out, ref):
            print(f"vector_add {strategy:<17}{n:>11} {dtype:<9}WRONG: differs from torch.add", flush=True)
            continue
        torch_ms = timed(lambda: torch.add(a, b, out=ref))
        rows.append(line(f"nvidia vector_add {strategy}", n, dtype, timed(prepared.run), torch_ms, 3 * out.nbytes))
        prepared.close()
        del a, b, out, ref
    return rows


def sweep_vector_add(sizes: list) -> list[dict]:
    rows = []
    for strategy in VECTOR_ADD_STRATEGIES:
        env = dict(os.environ, OPRT_VECTOR_ADD_STRATEGY=strategy)
        code = (f"import json, sys; sys.path[:0] = [{str(ROOT / 'scripts')!r}]; import elementwise_sweep as s; "
                f"print('JSON ' + json.dumps(s.vector_add_child({strategy!r}, {sizes!r})))")
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        for text in done.stdout.splitlines():
            if text.startswith("JSON "):
                rows += json.loads(text[5:])
            else:
                print(text, flush=True)
        if done.returncode:
            print(f"nvidia vector_add {strategy}: exit {done.returncode}: {done.stderr.strip()[-300:]}", flush=True)
    return rows


def copy_module():
    spec = importlib.util.spec_from_file_location("copy_kernels", ROOT / "ops" / "copy" / "tilelang" / "copy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_copy(module, dtype: str, program: str, block: int):
    import tilelang

    # as the runtime compiles (tilelang_backend.compiled), so both hit one disk-cache entry
    return tilelang.compile(getattr(module, program)(dtype, dtype, True, block), target="cuda",
                            execution_backend="cython")


def compile_copies(sizes: list) -> None:
    """Fill TileLang's disk cache with every copy kernel the sweep times (no GPU needed)."""
    module = copy_module()
    for dtype in sorted({dtype for _, dtype in sizes}):
        for program, block in COPY_VARIANTS:
            compile_copy(module, dtype, program, block)
            print(f"compiled tilelang {program} {dtype} block={block}", flush=True)


def sweep_tilelang_copy(sizes: list) -> list[dict]:
    import torch

    module = copy_module()
    rows = []
    for n, dtype in sizes:
        x = torch.randn(n, device="cuda", dtype=getattr(torch, dtype))
        y, ref = torch.empty_like(x), torch.empty_like(x)
        torch_ms = timed(lambda: ref.copy_(x))
        for program, block in COPY_VARIANTS:
            try:
                kernel = compile_copy(module, dtype, program, block)
                y.fill_(float("nan"))
                kernel(x, y)
                torch.cuda.synchronize()
                if not torch.equal(x, y):
                    print(f"tilelang {program} block={block}: WRONG", flush=True)
                    continue
                what = f"tilelang {program.replace('_program', '')} {block}"
                rows.append(line(what, n, dtype, timed(lambda: kernel(x, y)), torch_ms, 2 * x.nbytes))
            except Exception as e:  # reported; the sweep goes on
                print(f"tilelang {program} block={block}: {type(e).__name__}: {str(e)[:200]}", flush=True)
        del x, y, ref
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write every measurement to this file")
    parser.add_argument("--quick", action="store_true", help="2^28 f32 only")
    parser.add_argument("--only", choices=("vector_add", "copy"), help="one of the two sweeps")
    parser.add_argument("--compile-only", action="store_true", help="compile the TileLang copy kernels and stop")
    args = parser.parse_args()
    sizes = SIZES["quick" if args.quick else "full"]
    if args.compile_only:
        compile_copies(sizes)
        return 0
    import torch

    if not torch.cuda.is_available():
        print("elementwise_sweep.py needs a GPU", file=sys.stderr)
        return 2
    rows = []
    if args.only in (None, "vector_add"):
        rows += sweep_vector_add(sizes)
    if args.only in (None, "copy"):
        rows += sweep_tilelang_copy(sizes)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
