#!/usr/bin/env python3
"""Sweep TileLang matmul tile configs on this GPU against torch.matmul (cuBLAS) in the same
process: the data behind CONFIGS in ops/matmul/tilelang/matmul.py. Each candidate is a CONFIGS
row (BLOCK_M, BLOCK_N, BLOCK_K, STAGES, THREADS, SWIZZLE, POLICY[, STORE]); each result is checked
against torch before it is timed (a wrong one is reported, never ranked).

    python scripts/matmul_tilelang_sweep.py [--jobs 16] [--budget 150] [--json FILE]
    python scripts/matmul_tilelang_sweep.py --compile-only   # just fill TileLang's disk cache

Compiling is the slow part (20-40 s a kernel), so every (candidate, dtype) is first compiled in
parallel child processes, which leave the kernels in TileLang's disk cache; this process then
loads each from the cache and times it alone on the GPU. At the end, per shape, the fastest
config, printed as a CONFIGS row to paste.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib.util
import json
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "ops" / "matmul" / "tilelang" / "matmul.py"
PEAK_TFLOPS = 989.5  # H200 dense f16/bf16 tensor-core peak

# shape class -> (shapes (M, N, K), candidates). The first candidates are today's CONFIGS rows.
SWEEP = {
    "large": ([(4096, 4096, 4096), (8192, 8192, 8192)], [
        (128, 256, 64, 3, 256, 8, "FullRow"),
        (128, 256, 64, 3, 256, 8, "FullRow", "shared"),
        (128, 256, 64, 4, 256, 8, "FullRow", "shared"),
        (128, 256, 64, 3, 256, 16, "FullRow", "shared"),
        (128, 256, 64, 3, 256, 4, "FullRow", "shared"),
        (256, 128, 64, 3, 256, 8, "FullRow", "shared"),
        (128, 128, 64, 4, 256, 8, "Square", "shared"),
    ]),
    "short": ([(128, 8192, 8192)], [
        (128, 64, 64, 6, 128, 0, "Square"),
        (128, 64, 64, 6, 128, 0, "Square", "shared"),
    ]),
    "skinny": ([(16, 8192, 8192), (64, 8192, 8192)], [
        (64, 128, 128, 3, 128, 0, "Square"),
        (64, 128, 128, 3, 128, 0, "Square", "shared"),
    ]),
}
DTYPES = ("float16", "bfloat16")
GRAPH_REPS = 20


def load_kernels():
    spec = importlib.util.spec_from_file_location("matmul_tilelang_kernels", KERNEL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_kernel(dtype: str, config: tuple):
    import tilelang

    # as the runtime compiles (tilelang_backend.compiled), so both hit one disk-cache entry
    return tilelang.compile(load_kernels().tiled_matmul(dtype, *config), target="cuda", execution_backend="cython")


def compile_job(dtype: str, config: tuple) -> tuple[str, tuple, float, str | None]:
    t0 = time.perf_counter()
    try:
        compile_kernel(dtype, config)
        return dtype, config, time.perf_counter() - t0, None
    except Exception as e:  # reported in the table; the sweep goes on
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        said = next((ln for ln in lines if "rror" in ln), lines[0] if lines else "")
        return dtype, config, time.perf_counter() - t0, f"{type(e).__name__}: {said[:200]}"


def compile_all(jobs: int) -> dict:
    work = {(d, c) for shapes, candidates in SWEEP.values() for c in candidates for d in DTYPES}
    errors = {}
    t0 = time.perf_counter()
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        for dtype, config, seconds, error in pool.map(compile_job, *zip(*sorted(work))):
            print(f"compiled {dtype:<9}{str(config):<40}{seconds:6.1f} s{'  ' + error if error else ''}", flush=True)
            if error:
                errors[(dtype, config)] = error
    print(f"compiled {len(work)} kernels in {time.perf_counter() - t0:.0f} s with {jobs} processes", flush=True)
    return errors


def timed_ms(fn) -> tuple[float, str]:
    """Per-call milliseconds of fn, from a CUDA graph of GRAPH_REPS calls where fn can be captured
    (so host launch cost, larger for a Python-called TileLang kernel than for the runtime's
    prepared launch, does not hide a skinny kernel's time), else from plain calls."""
    import torch

    from operator_runtime_testing.timing import time_callable

    try:
        fn()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(GRAPH_REPS):
                fn()
        graph.replay()
        torch.cuda.synchronize()
        return time_callable(graph.replay, "cuda").median_ms / GRAPH_REPS, "graph"
    except Exception:  # not capturable: plain calls
        torch.cuda.synchronize()
        return time_callable(fn, "cuda").median_ms, "eager"


def sweep(budget: float, errors: dict) -> list[dict]:
    import torch

    rows, kernels, t_start = [], {}, time.perf_counter()
    current = {v: k for k, v in load_kernels().CONFIGS.items()}
    print(f"{'shape':<17}{'dtype':<9}{'config':<40}{'ms':>9}{'TFLOP/s':>9}{'peak%':>7}{'x torch':>8}", flush=True)
    for cls, (shapes, candidates) in SWEEP.items():
        for m, n, k in shapes:
            for dtype in DTYPES:
                tdtype = getattr(torch, dtype)
                a = torch.randn(1, m, k, device="cuda", dtype=tdtype)
                b = torch.randn(1, k, n, device="cuda", dtype=tdtype)
                c = torch.empty(1, m, n, device="cuda", dtype=tdtype)
                ref = torch.empty_like(c)
                torch_ms, how = timed_ms(lambda: torch.matmul(a, b, out=ref))
                flops = 2.0 * m * n * k
                shape = f"{m}x{n}x{k}"
                print(f"{shape:<17}{dtype:<9}{'torch.matmul':<40}{torch_ms:9.4f}{flops / torch_ms / 1e9:9.1f}"
                      f"{100 * flops / torch_ms / 1e9 / PEAK_TFLOPS:7.1f}{1.0:8.2f}  ({how})", flush=True)
                for config in candidates:
                    row = {"class": cls, "shape": [m, n, k], "dtype": dtype, "config": list(config),
                           "torch_ms": torch_ms, "ms": None, "error": errors.get((dtype, config))}
                    rows.append(row)
                    how = ""
                    if row["error"] is None and time.perf_counter() - t_start > budget:
                        row["error"] = "skipped: over the time budget"
                    if row["error"] is None:
                        try:
                            if (dtype, config) not in kernels:  # from the disk cache phase 1 filled
                                kernels[(dtype, config)] = compile_kernel(dtype, config)
                            kernel = kernels[(dtype, config)]
                            c.fill_(float("nan"))
                            kernel(a, b, c)
                            torch.cuda.synchronize()
                            scale = ref.float().abs().max().item()
                            worst = (c.float() - ref.float()).abs().max().item()
                            if not worst <= 2e-2 * scale:  # NaN fails too
                                row["error"] = f"WRONG: max |diff| {worst:.3g} (max |torch| {scale:.3g})"
                            else:
                                row["ms"], how = timed_ms(lambda: kernel(a, b, c))
                        except Exception as e:
                            row["error"] = f"{type(e).__name__}: {str(e)[:200]}"
                    tag = f"{current[config]} (today)" if config in current else ""
                    if row["ms"]:
                        print(f"{shape:<17}{dtype:<9}{str(config):<40}{row['ms']:9.4f}{flops / row['ms'] / 1e9:9.1f}"
                              f"{100 * flops / row['ms'] / 1e9 / PEAK_TFLOPS:7.1f}{torch_ms / row['ms']:8.2f}  {tag} ({how})",
                              flush=True)
                    else:
                        print(f"{shape:<17}{dtype:<9}{str(config):<40}  {row['error']}  {tag}", flush=True)
                del a, b, c, ref
    return rows


def summary(rows: list[dict]) -> None:
    print("\nbest per shape (ratio = torch ms / ours; paste the row into CONFIGS):")
    keys = sorted({(r["class"], tuple(r["shape"]), r["dtype"]) for r in rows})
    for cls, shape, dtype in keys:
        timed = [r for r in rows if (r["class"], tuple(r["shape"]), r["dtype"]) == (cls, shape, dtype) and r["ms"]]
        if not timed:
            print(f"  {'x'.join(map(str, shape)):<17}{dtype:<9} nothing timed")
            continue
        best, first = min(timed, key=lambda r: r["ms"]), timed[0]
        print(f"  {'x'.join(map(str, shape)):<17}{dtype:<9}{best['torch_ms'] / best['ms']:5.2f}x  {tuple(best['config'])},"
              f"   (first timed candidate {tuple(first['config'])}: {first['torch_ms'] / first['ms']:.2f}x)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=16, help="parallel compile processes")
    parser.add_argument("--budget", type=float, default=150.0, help="seconds for the timing phase")
    parser.add_argument("--compile-only", action="store_true", help="fill the disk cache and stop")
    parser.add_argument("--json", help="write every measurement to this file")
    args = parser.parse_args()
    errors = compile_all(args.jobs)
    if args.compile_only:
        return 0
    import torch

    if not torch.cuda.is_available():
        print("matmul_tilelang_sweep.py needs a GPU", file=sys.stderr)
        return 2
    rows = sweep(args.budget, errors)
    summary(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
