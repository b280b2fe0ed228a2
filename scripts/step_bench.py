#!/usr/bin/env python3
"""Time every chapter step (ops/<op>/steps/ and the production kernel) against torch, in one run.

    python3 scripts/step_bench.py --json $OUT/steps.json            # on a GPU; commit as data/bench/steps/h200.json
    python3 scripts/step_bench.py --json x.json --ops copy softmax
    python3 scripts/step_bench.py --ops matmul --json $OUT/steps-matmul.json   # commit as data/bench/steps/h200-matmul.json

One run, one device, one copy ceiling: each step is timed the way the labs and tests/run_ops.py
time (operator_runtime_testing.timing: warm-up, CUDA events, median of 30 samples) on shapes
larger than the H200's L2 (float32), next to eager torch on the same tensors. Before it is timed,
each step's result is compared with torch: a wrong kernel is reported and not charted as fast.
matmul is compute-bound: 4096^3, each step in the dtypes it is for (DTYPES: CUDA-core steps in
f32 and f16, TileLang's in f16, whose T.gemm would round f32 to tf32), its rows carry flops
(TFLOP/s) and torch.matmul's time on the same tensors; a step slower than MAX_CALL_S per call
is reported and skipped (the naive kernel takes about 0.1 s on an H200).
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
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "runtime" / "ops"), str(ROOT / "python")]

import torch  # noqa: E402

from operator_course.book import steps as step_files  # noqa: E402
from operator_course.book.roofline import compute_peak_gflops  # noqa: E402
from operator_course.lab.cases import TORCH_OPS, flops, input_shapes, output_shape  # noqa: E402
from operator_runtime_testing.operators import OPERATORS  # noqa: E402
from operator_runtime_testing.performance import PerformanceResult, write_results  # noqa: E402
from operator_runtime_testing.timing import time_callable  # noqa: E402

# (shape, what it shows): every one over 60 MB of traffic in float32, so L2 cannot hold it (each
# operator's record: operators/<op>.py step_bench_shapes)
SHAPES = {op: list(OPERATORS[op].step_bench_shapes) for op in step_files.OPS}

F32, F16 = torch.float32, torch.float16
# (op, language) -> the dtypes its steps are timed in; float32 where not listed
DTYPES = {("matmul", "cuda"): (F32, F16), ("matmul", "tilelang"): (F16,)}
DTYPE_NAMES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
TL_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}
MAX_CALL_S = 2.0  # a step slower than this per call is not timed (30 samples would take minutes)


def _row_op(op: str) -> bool:
    """Row ops (reduce_sum, softmax) run over dim -1 and pick kernels by row length."""
    return OPERATORS[op].kind == "rows"


def dtypes(op: str, lang: str) -> tuple:
    return DTYPES.get((op, lang), (F32,))


def _compile_tilelang(path: str, op: str, dtype: str) -> str:
    """In a worker process: compile one TileLang step for the GPU (fills TileLang's disk cache)."""
    from operator_course.lab.kernels import compile_tilelang

    step = next(s for s in step_files.steps(op, "tilelang") if str(s.path) == path)
    t0 = time.perf_counter()
    compile_tilelang(step.program()(dtype, True), "cuda")
    return f"{step.key} {dtype}: {time.perf_counter() - t0:.1f} s"


def _warm_production(op: str, row_lens: list[int]) -> str:
    """In a worker process: run the TileLang production op once per kernel variant the bench
    shapes pick (by row length; matmul's by its bench shapes), so its kernels are in TileLang's
    disk cache for this process."""
    import operator_runtime as ort

    t0 = time.perf_counter()
    if op == "matmul":
        for m, n, k in SHAPES[op]:
            for dtype in dtypes(op, "tilelang"):
                a = torch.randn(m, k, device="cuda", dtype=dtype)
                ort.matmul(a, torch.randn(k, n, device="cuda", dtype=dtype), backend="tilelang")
        row_lens = []
    for row_len in row_lens:
        x = torch.randn(2, row_len, device="cuda")
        if _row_op(op):
            getattr(ort, op)(x, -1, backend="tilelang")
        else:  # element-wise: every input x
            getattr(ort, op)(*[x] * OPERATORS[op].inputs, backend="tilelang")
    torch.cuda.synchronize()
    return f"{op}/tilelang/production: {time.perf_counter() - t0:.1f} s"


def compile_all(todo: list[step_files.Step]) -> dict:
    """(step key, dtype) -> a callable ``run(*inputs, out=out)`` (CUDA steps: one per key, any dtype),
    everything compiled in parallel first."""
    from operator_course.cuda import cuda_build
    from operator_course.lab.kernels import compile_tilelang, run_tilelang

    cuda = [s for s in todo if s.lang == "cuda" and not s.production]
    tiles = [s for s in todo if s.lang == "tilelang" and not s.production]
    capability = torch.cuda.get_device_capability()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(min(16, os.cpu_count() or 4)) as threads, \
            ProcessPoolExecutor(min(8, os.cpu_count() or 4), mp_context=get_context("spawn")) as processes:
        libs = {s.key: threads.submit(cuda_build.build_library, s.op, s.source(), True, capability) for s in cuda}
        warm = [processes.submit(_compile_tilelang, str(s.path), s.op, TL_NAMES[d])
                for s in tiles for d in dtypes(s.op, s.lang)]
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
                    lab = cuda_build.CudaLab(s.op, ctypes.CDLL(str(libs[s.key].result())), synchronize=False)
                    runners.update({(s.key, d): lab for d in dtypes(s.op, s.lang)})  # one entry point per dtype
                for d in dtypes(s.op, s.lang) if s.lang == "tilelang" else ():
                    kernel = compile_tilelang(s.program()(TL_NAMES[d], True), "cuda")  # from the cache
                    runners[s.key, d] = lambda *inputs, out, k=kernel, op=s.op: run_tilelang(k, op, list(inputs), out)
            except Exception as e:  # noqa: BLE001
                print(f"  {s.key}: does not build: {str(e)[:500]}", flush=True)
    print(f"compiled {len(cuda)} CUDA and {len(tiles)} TileLang steps in {time.perf_counter() - t0:.0f} s", flush=True)
    return runners


def production_runner(step: step_files.Step, inputs, out):
    import operator_runtime as ort

    attrs = {"dim": -1} if _row_op(step.op) else {}
    prepared = getattr(ort, f"prepare_{step.op}")(out, *inputs, **attrs, backend=step_files.BACKEND[step.lang])
    return prepared


def agrees(op: str, out: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether a step's result is torch's. matmul: torch sums K products in another order (and
    rounds 16-bit outputs once, as the steps do), so the whole result is compared, relative to
    its size: 1e-4 in f32 (a wrong tile or a lost K step is far larger), 1e-2 in f16/bf16."""
    if op == "matmul":
        if not bool(out.isfinite().all()):
            return False
        err = (out.double() - expected.double()).norm() / expected.double().norm().clamp_min(1e-30)
        return err.item() <= (1e-4 if out.dtype == torch.float32 else 1e-2)
    return torch.allclose(out, expected, rtol=1e-3, atol=1e-4, equal_nan=True)


class TooSlow(RuntimeError):
    pass


def measure(step, run, inputs, out, theirs_ms: float, expected, ceiling, device: str = "cuda",
            shape: tuple | None = None) -> PerformanceResult:
    """``shape``: the bench shape when it is not the first input's (matmul's (M, N, K))."""
    notes = []
    out.fill_(float("nan"))
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    run()  # the first call may load what the second finds ready
    sync()
    t0 = time.perf_counter()
    run()
    sync()
    if time.perf_counter() - t0 > MAX_CALL_S:
        raise TooSlow(f"one call took {time.perf_counter() - t0:.1f} s (> {MAX_CALL_S} s): not timed")
    if not agrees(step.op, out, expected):
        notes.append("result differs from torch")  # a fast wrong kernel must not look good
    ours = time_callable(run, device)
    moved = sum(t.numel() * t.element_size() for t in inputs) + out.numel() * out.element_size()
    shape = tuple(shape or inputs[0].shape)
    return PerformanceResult(
        op=step.op, backend=step.lang, shape=list(shape), dtype=DTYPE_NAMES[out.dtype],
        attrs={"step": step.name, "number": step.number, "title": step.title},
        latency_ms=ours.median_ms, latency_p10_ms=ours.p10_ms, latency_p90_ms=ours.p90_ms, bytes=moved,
        flops=flops(step.op, shape) or 0, torch_ms=theirs_ms, ceiling_gbps=ceiling,
        peak_gflops=compute_peak_gflops(device, DTYPE_NAMES[out.dtype], True) if step.op == "matmul" else None,
        notes=notes)


def bench_shape(op, shape, dtype, todo, runners, ceiling, gen, failures) -> list[PerformanceResult]:
    """Every step of ``todo`` on fresh inputs of ``shape`` and ``dtype``, with torch on the same tensors."""
    inputs = [torch.randn(s, device="cuda", generator=gen).to(dtype) for s in input_shapes(op, shape)]
    out = torch.empty(output_shape(op, shape), device="cuda", dtype=dtype)
    torch_out = torch.empty_like(out)
    theirs = time_callable(lambda: TORCH_OPS[op](torch_out, *inputs), "cuda").median_ms
    expected = TORCH_OPS[op](torch_out, *inputs).clone()
    work = flops(op, shape)
    rows = []
    for step in todo:
        label = f"{step.key} {'x'.join(map(str, shape))} {DTYPE_NAMES[dtype]}"
        try:
            if step.production:
                with production_runner(step, inputs, out) as p:
                    row = measure(step, p.run, inputs, out, theirs, expected, ceiling, shape=shape)
            else:
                run = runners.get((step.key, dtype))
                if run is None:
                    raise RuntimeError("not compiled")
                row = measure(step, lambda: run(*inputs, out=out), inputs, out, theirs, expected, ceiling, shape=shape)
        except Exception as e:  # noqa: BLE001 - one broken step must not cost the others' figures
            failures.append(f"{label}: {type(e).__name__}: {str(e)[:300]}")
            print(f"  {label}: FAILED {failures[-1]}", flush=True)
            continue
        rows.append(row)
        rate = (f"{row.gflops / 1e3:7.1f} TFLOP/s  torch {work / theirs / 1e9:7.1f}" if work
                else f"{row.gbps:7.0f} GB/s  torch {theirs * 1e3:8.1f} us")
        print(f"  {label:<52} {row.latency_ms * 1e3:9.1f} us {rate}  {' '.join(row.notes)}", flush=True)
    return rows


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
            for dtype in sorted({d for s in todo if s.op == op for d in dtypes(op, s.lang)}, key=DTYPE_NAMES.get):
                results += bench_shape(op, shape, dtype, [s for s in todo if s.op == op and dtype in dtypes(op, s.lang)],
                                       runners, ceiling, gen, failures)
    write_results(args.json, results, "cuda", ["scripts/step_bench.py", *sys.argv[1:]], ceiling)
    print(f"{len(results)} rows in {args.json} after {time.perf_counter() - t_start:.0f} s"
          + (f"; {len(failures)} failed:\n" + "\n".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
