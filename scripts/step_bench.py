#!/usr/bin/env python3
"""Time every chapter step (ops/<op>/steps/ and the production kernel) against torch, in one run.

    python3 scripts/step_bench.py --json $OUT/steps.json            # on a GPU; commit as data/bench/steps/h200.json
    python3 scripts/step_bench.py --json x.json --ops copy softmax

One run, one device, one copy ceiling: each step is timed the way the labs and tests/run_ops.py
time (operator_runtime_testing.timing: warm-up, CUDA events, median of 30 samples) on shapes
larger than the H200's L2 (float32), next to eager torch on the same tensors. Before it is timed,
each step's result is compared with torch: a wrong kernel is reported and not charted as fast.
The JSON is run_ops.py's (performance.write_results): one row per (step, shape), backend = the
step's language, attrs = {step, number, title}. It lives in data/bench/steps/, outside the
data/bench/*.json that the chapters read as whole-operator benchmarks (chapter.results_files).

Compiling dominates a cold run, so every step is compiled first, in parallel: nvcc in threads
(each is its own process), TileLang in worker processes that fill TileLang's disk cache (the
step programs, and the production kernels by running each op once per variant the bench shapes
pick), from which this process then loads the kernels.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "ops"), str(ROOT / "python")]

import torch  # noqa: E402

from operator_runtime_testing import steps as step_files  # noqa: E402
from operator_runtime_testing.lab.cases import INPUTS, TORCH_OPS, output_shape  # noqa: E402
from operator_runtime_testing.operators import OPERATORS  # noqa: E402
from operator_runtime_testing.performance import PerformanceResult, write_results  # noqa: E402
from operator_runtime_testing.timing import time_callable  # noqa: E402

# (shape, what it shows): every one over 60 MB of traffic in float32, so L2 cannot hold it (each
# operator's record: operators/<op>.py step_bench_shapes)
SHAPES = {op: list(OPERATORS[op].step_bench_shapes) for op in step_files.OPS}


def _row_op(op: str) -> bool:
    """Row ops (reduce_sum, softmax) run over dim -1 and pick kernels by row length."""
    return OPERATORS[op].kind == "rows"


def _compile_tilelang(path: str, op: str) -> str:
    """In a worker process: compile one TileLang step for the GPU (fills TileLang's disk cache)."""
    from operator_runtime_testing.lab.kernels import compile_tilelang

    step = next(s for s in step_files.steps(op, "tilelang") if str(s.path) == path)
    t0 = time.perf_counter()
    compile_tilelang(step.program()("float32", True), "cuda")
    return f"{step.key}: {time.perf_counter() - t0:.1f} s"


def _warm_production(op: str, row_lens: list[int]) -> str:
    """In a worker process: run the TileLang production op once per kernel variant the bench
    shapes pick (by row length), so its kernels are in TileLang's disk cache for this process."""
    import operator_runtime as ort

    t0 = time.perf_counter()
    for row_len in row_lens:
        x = torch.randn(2, row_len, device="cuda")
        if _row_op(op):
            getattr(ort, op)(x, -1, backend="tilelang")
        else:  # element-wise: every input x
            getattr(ort, op)(*[x] * OPERATORS[op].inputs, backend="tilelang")
    torch.cuda.synchronize()
    return f"{op}/tilelang/production: {time.perf_counter() - t0:.1f} s"


def compile_all(todo: list[step_files.Step]) -> dict:
    """step key -> a callable ``run(*inputs, out=out)``, everything compiled in parallel first."""
    from operator_runtime_testing.lab import cuda_build
    from operator_runtime_testing.lab.kernels import compile_tilelang, run_tilelang

    cuda = [s for s in todo if s.lang == "cuda" and not s.production]
    tiles = [s for s in todo if s.lang == "tilelang" and not s.production]
    capability = torch.cuda.get_device_capability()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(min(16, os.cpu_count() or 4)) as threads, \
            ProcessPoolExecutor(min(8, os.cpu_count() or 4), mp_context=get_context("spawn")) as processes:
        libs = {s.key: threads.submit(cuda_build.build_library, s.op, s.source(), True, capability) for s in cuda}
        warm = [processes.submit(_compile_tilelang, str(s.path), s.op) for s in tiles]
        warm += [processes.submit(_warm_production, s.op, sorted({shape[-1] for shape in SHAPES[s.op]})
                                  if _row_op(s.op) else [1024])  # element-wise: one kernel
                 for s in todo if s.lang == "tilelang" and s.production]
        for f in warm:
            try:
                print("  compiled", f.result(), flush=True)
            except Exception as e:  # noqa: BLE001 - reported again below, where it is loaded
                print(f"  a TileLang step failed to compile in a worker: {str(e)[:300]}", flush=True)
        runners = {}
        for s in cuda + tiles:  # a step that does not build is reported, and the others still run
            try:
                if s.lang == "cuda":  # no synchronize after each call: back-to-back launches, as torch's are timed
                    runners[s.key] = cuda_build.CudaLab(s.op, ctypes.CDLL(str(libs[s.key].result())), synchronize=False)
                else:
                    kernel = compile_tilelang(s.program()("float32", True), "cuda")  # from the cache
                    runners[s.key] = lambda *inputs, out, k=kernel, op=s.op: run_tilelang(k, op, list(inputs), out)
            except Exception as e:  # noqa: BLE001
                print(f"  {s.key}: does not build: {str(e)[:500]}", flush=True)
    print(f"compiled {len(cuda)} CUDA and {len(tiles)} TileLang steps in {time.perf_counter() - t0:.0f} s", flush=True)
    return runners


def production_runner(step: step_files.Step, inputs, out):
    import operator_runtime as ort

    attrs = {"dim": -1} if _row_op(step.op) else {}
    prepared = getattr(ort, f"prepare_{step.op}")(out, *inputs, **attrs, backend=step_files.BACKEND[step.lang])
    return prepared


def measure(step, run, inputs, out, theirs_ms: float, expected, ceiling, device: str = "cuda") -> PerformanceResult:
    notes = []
    out.fill_(float("nan"))
    run()
    if device == "cuda":
        torch.cuda.synchronize()
    if not torch.allclose(out, expected, rtol=1e-3, atol=1e-4, equal_nan=True):
        notes.append("result differs from torch")  # a fast wrong kernel must not look good
    ours = time_callable(run, device)
    moved = sum(t.numel() * t.element_size() for t in inputs) + out.numel() * out.element_size()
    return PerformanceResult(
        op=step.op, backend=step.lang, shape=list(inputs[0].shape), dtype="f32",
        attrs={"step": step.name, "number": step.number, "title": step.title},
        latency_ms=ours.median_ms, latency_p10_ms=ours.p10_ms, latency_p90_ms=ours.p90_ms, bytes=moved,
        flops=0, torch_ms=theirs_ms, ceiling_gbps=ceiling, notes=notes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", required=True, help="where to write the results")
    parser.add_argument("--ops", nargs="+", default=list(step_files.OPS), choices=step_files.OPS)
    parser.add_argument("--langs", nargs="+", default=list(step_files.LANGS), choices=step_files.LANGS)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("step_bench.py times kernels on a GPU; this machine has none", file=sys.stderr)
        return 2
    from bench.harness import measure_copy_ceiling

    t_start = time.perf_counter()
    todo = [s for op in args.ops for s in step_files.steps(op) if s.lang in args.langs]
    runners = compile_all(todo)
    ceiling = measure_copy_ceiling("cuda")
    print(f"copy ceiling: {ceiling:.0f} GB/s", flush=True)
    gen = torch.Generator(device="cuda").manual_seed(0)
    results, failures = [], []
    for op in args.ops:
        for shape in SHAPES[op]:
            inputs = [torch.randn(shape, device="cuda", generator=gen) for _ in range(INPUTS[op])]
            out = torch.empty(output_shape(op, shape), device="cuda")
            torch_out = torch.empty_like(out)
            theirs = time_callable(lambda: TORCH_OPS[op](torch_out, *inputs), "cuda").median_ms
            expected = TORCH_OPS[op](torch_out, *inputs).clone()
            for step in (s for s in todo if s.op == op):
                label = f"{step.key} {'x'.join(map(str, shape))}"
                try:
                    if step.production:
                        with production_runner(step, inputs, out) as p:
                            row = measure(step, p.run, inputs, out, theirs, expected, ceiling)
                    else:
                        run = runners.get(step.key)
                        if run is None:
                            raise RuntimeError("not compiled")
                        row = measure(step, lambda: run(*inputs, out=out), inputs, out, theirs, expected, ceiling)
                except Exception as e:  # noqa: BLE001 - one broken step must not cost the others' figures
                    failures.append(f"{label}: {type(e).__name__}: {str(e)[:300]}")
                    print(f"  {label}: FAILED {failures[-1]}", flush=True)
                    continue
                results.append(row)
                print(f"  {label:<48} {row.latency_ms * 1e3:9.1f} us {row.gbps:7.0f} GB/s  torch {theirs * 1e3:8.1f} us"
                      f"  {' '.join(row.notes)}", flush=True)
    write_results(args.json, results, "cuda", ["scripts/step_bench.py", *sys.argv[1:]], ceiling)
    print(f"{len(results)} rows in {args.json} after {time.perf_counter() - t_start:.0f} s"
          + (f"; {len(failures)} failed:\n" + "\n".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
