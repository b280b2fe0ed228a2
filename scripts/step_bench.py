#!/usr/bin/env python3
"""Time every chapter step (ops/<op>/steps/ and the production kernel) against torch, in one run.

    python3 scripts/step_bench.py --json $OUT/steps.json            # on a GPU; commit as data/bench/steps/h200.json
    python3 scripts/step_bench.py --json x.json --ops copy softmax
    python3 scripts/step_bench.py --ops matmul --json $OUT/steps-matmul.json   # commit as data/bench/steps/h200-matmul.json
    python3 scripts/step_bench.py --ops scaled_dot_product_attention --json $OUT/steps-attention.json

One run, one device, one copy ceiling: each step is timed the way the labs and tests/run_ops.py
time (operator_runtime_testing.timing: warm-up, CUDA events, median of 30 samples) on shapes
larger than the H200's L2 (float32), next to eager torch on the same tensors. Before it is timed,
each step's result is compared with torch: a wrong kernel is reported and not charted as fast.
matmul is compute-bound: 4096^3, each step in the dtypes it is for (DTYPES: CUDA-core steps in
f32 and f16, TileLang's in f16, whose T.gemm would round f32 to tf32), its rows carry flops
(TFLOP/s) and torch.matmul's time on the same tensors; a step slower than MAX_CALL_S per call
is reported and skipped (the naive kernel takes about 0.1 s on an H200).
scaled_dot_product_attention is timed on issue 31's anchors (its record's step_bench_shapes, in the
form (B, H, Sq, Sk, D, is_causal)): prefill b4 h32 s4096 d128 full and causal, and decode (one
query against 8192 keys), in bf16 and f16, against F.scaled_dot_product_attention on the same
tensors (torch's default backend choice); flops 4 B H Sq Sk D, halved for causal (issue 31 counts
so). Its CUDA steps are called through a general entry point (any Sq, Sk, causal or not) that
step_bench adds beside the lab's, whose call is causal self-attention only; its TileLang steps are
compiled once per mask. The CUDA production kernel is timed once per OPRT_ATTENTION_STRATEGY
(ATTENTION_VARIANTS: the variable is read when the descriptor is created, so each variant
prepares its own), the default (auto: wgmma on Hopper prefill, mma.sync split-KV for decode) as the
row "production".
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
import functools
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
BF16 = torch.bfloat16
ATTENTION = "scaled_dot_product_attention"
DTYPES = {("matmul", "cuda"): (F32, F16), ("matmul", "tilelang"): (F16,),
          (ATTENTION, "cuda"): (BF16, F16), (ATTENTION, "tilelang"): (BF16, F16)}
COMPUTE_BOUND = ("matmul", ATTENTION)  # rows timed in FLOP/s against the tensor-core peak
# The CUDA production kernel of attention, once per strategy (the nvidia backend reads
# OPRT_ATTENTION_STRATEGY when a descriptor is created): the step name of its row, its title's
# suffix, the variable's value. "production" (auto) is the runtime's default.
ATTENTION_VARIANTS = (("production-cuda-cores", "cuda-cores", "cuda-cores"),
                      ("production-tensor-cores", "mma.sync", "no-split"),
                      ("production-mma", "mma.sync, split-KV", "mma"),
                      ("production", "auto: wgmma on Hopper prefill", "auto"))
DTYPE_NAMES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
TL_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}
MAX_CALL_S = 2.0  # a step slower than this per call is not timed (30 samples would take minutes)


def _row_op(op: str) -> bool:
    """Row ops (reduce_sum, softmax) run over dim -1 and pick kernels by row length."""
    return OPERATORS[op].kind == "rows"


def dtypes(op: str, lang: str) -> tuple:
    return DTYPES.get((op, lang), (F32,))


def _tilelang_program(step, dtype: str, causal: bool | None):
    """A TileLang step's GPU program; attention's take the mask as a compile-time argument."""
    return step.program()(dtype, True) if causal is None else step.program()(dtype, True, causal)


def _masks(op: str) -> tuple:
    """The causal flags a TileLang step of ``op`` is compiled for (None: the op has no mask)."""
    return tuple(sorted({bool(shape[5]) for shape in SHAPES[op]})) if op == ATTENTION else (None,)


def _compile_tilelang(path: str, op: str, dtype: str, causal: bool | None = None) -> str:
    """In a worker process: compile one TileLang step for the GPU (fills TileLang's disk cache)."""
    from operator_course.lab.kernels import compile_tilelang

    step = next(s for s in step_files.steps(op, "tilelang") if str(s.path) == path)
    t0 = time.perf_counter()
    compile_tilelang(_tilelang_program(step, dtype, causal), "cuda")
    return f"{step.key} {dtype}{'' if causal is None else ' causal' if causal else ' full'}: " \
           f"{time.perf_counter() - t0:.1f} s"


def _warm_production(op: str, row_lens: list[int]) -> str:
    """In a worker process: run the TileLang production op once per kernel variant the bench
    shapes pick (by row length; matmul's by its bench shapes), so its kernels are in TileLang's
    disk cache for this process."""
    import operator_runtime as ort

    t0 = time.perf_counter()
    if op == ATTENTION:  # one small call per (dtype, mask, query length class): the kernels the shapes pick
        for b, h, sq, sk, d, causal in SHAPES[op]:
            for dtype in dtypes(op, "tilelang"):
                q = torch.randn(1, 2, min(sq, 64), d, device="cuda", dtype=dtype)
                kv = torch.randn(1, 2, min(sk, 128), d, device="cuda", dtype=dtype)
                ort.scaled_dot_product_attention(q, kv, kv, is_causal=bool(causal), backend="tilelang")
        row_lens = []
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
        libs = {s.key: threads.submit(_attention_library, s, capability) if s.op == ATTENTION
                else threads.submit(cuda_build.build_library, s.op, s.source(), True, capability) for s in cuda}
        warm = [processes.submit(_compile_tilelang, str(s.path), s.op, TL_NAMES[d], c)
                for s in tiles for d in dtypes(s.op, s.lang) for c in _masks(s.op)]
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
                if s.lang == "cuda" and s.op == ATTENTION:
                    lib = ctypes.CDLL(str(libs[s.key].result()))
                    runners.update({(s.key, d): _attention_runner(lib, d) for d in dtypes(s.op, s.lang)})
                elif s.lang == "cuda":  # no synchronize after each call: back-to-back launches, as torch's are timed
                    lab = cuda_build.CudaLab(s.op, ctypes.CDLL(str(libs[s.key].result())), synchronize=False)
                    runners.update({(s.key, d): lab for d in dtypes(s.op, s.lang)})  # one entry point per dtype
                for d in dtypes(s.op, s.lang) if s.lang == "tilelang" else ():
                    kernels = {c: compile_tilelang(_tilelang_program(s, TL_NAMES[d], c), "cuda")  # from the cache
                               for c in _masks(s.op)}
                    if s.op == ATTENTION:
                        runners[s.key, d] = lambda *inputs, out, causal, ks=kernels, op=s.op: \
                            run_tilelang(ks[causal], op, list(inputs), out)
                    else:
                        runners[s.key, d] = lambda *inputs, out, k=kernels[None], op=s.op: \
                            run_tilelang(k, op, list(inputs), out)
            except Exception as e:  # noqa: BLE001
                print(f"  {s.key}: does not build: {str(e)[:500]}", flush=True)
    print(f"compiled {len(cuda)} CUDA and {len(tiles)} TileLang steps in {time.perf_counter() - t0:.0f} s", flush=True)
    return runners


# attention's CUDA steps: the general call beside the lab's entry points (which are causal
# self-attention only), one per dtype; each step file defines attention<T>(..., causal, scale, stream)
ATTENTION_ENTRY = """
extern "C" int step_attention_{suffix}(const void* q, const void* k, const void* v, void* o, int64_t bh,
                                       int64_t sq, int64_t sk, int64_t d, int causal, float scale, void* stream) {{
  using T = {ctype};
  attention<T>((const T*)q, (const T*)k, (const T*)v, (T*)o, bh, sq, sk, d, causal != 0, scale,
               (cudaStream_t)stream);
  return (int)cudaGetLastError();
}}
"""


def _attention_library(step: step_files.Step, capability: tuple) -> Path:
    """An attention CUDA step built with the general entry points as well (cached by hash, beside
    the labs' builds); the flags are cuda_build.build_library's."""
    import hashlib

    from operator_course.cuda import cuda_build

    entries = "".join(ATTENTION_ENTRY.format(suffix=suffix, ctype=ctype) for suffix, ctype in cuda_build.SUFFIX.values())
    text = cuda_build.full_source(step.op, step.source(), own_launch=True) + entries
    arch = "sm_{}{}".format(*capability)
    cuda_build.CACHE.mkdir(parents=True, exist_ok=True)
    src = cuda_build.CACHE / f"{step.op}-bench-{hashlib.sha256(text.encode()).hexdigest()[:16]}.cu"
    lib = src.with_suffix(f".{arch}.so")
    if not lib.exists():
        src.write_text(text)
        cuda_lib = Path(cuda_build._nvcc()).resolve().parents[1] / "lib64"
        cuda_build._run_nvcc([f"-arch={arch}", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                              "-Xlinker", f"-rpath={cuda_lib}", str(src), "-o", str(lib)])
    return lib


def _attention_runner(lib: ctypes.CDLL, dtype):
    """``run(q, k, v, out=, causal=)`` through the general entry point, on the current stream, torch's
    default scale; no synchronize (back-to-back launches)."""
    from operator_course.cuda import cuda_build

    fn = getattr(lib, f"step_attention_{cuda_build.SUFFIX[dtype][0]}")
    fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64] * 4 + [ctypes.c_int, ctypes.c_float, ctypes.c_void_p]

    def run(q, k, v, *, out, causal):
        b, h, sq, d = q.shape
        code = fn(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), b * h, sq, k.shape[2], d, int(causal),
                  1.0 / d ** 0.5, torch.cuda.current_stream().cuda_stream)
        if code:
            raise RuntimeError(f"the kernel launch failed: CUDA error {code}")
    return run


def production_runner(step: step_files.Step, inputs, out, attrs: dict | None = None):
    import operator_runtime as ort

    attrs = ({"dim": -1} if _row_op(step.op) else {}) if attrs is None else attrs
    prepared = getattr(ort, f"prepare_{step.op}")(out, *inputs, **attrs, backend=step_files.BACKEND[step.lang])
    return prepared


def attention_variant(step: step_files.Step, strategy: str, inputs, out, causal: bool):
    """The CUDA production kernel prepared under OPRT_ATTENTION_STRATEGY=strategy: the descriptor
    reads it at create, so the variable is set only around this prepare and restored after."""
    saved = os.environ.get("OPRT_ATTENTION_STRATEGY")
    os.environ["OPRT_ATTENTION_STRATEGY"] = strategy
    try:
        return production_runner(step, inputs, out, {"is_causal": causal})
    finally:
        if saved is None:
            del os.environ["OPRT_ATTENTION_STRATEGY"]
        else:
            os.environ["OPRT_ATTENTION_STRATEGY"] = saved


def agrees(op: str, out: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether a step's result is torch's. matmul: torch sums K products in another order (and
    rounds 16-bit outputs once, as the steps do), so the whole result is compared, relative to
    its size: 1e-4 in f32 (a wrong tile or a lost K step is far larger), 1e-2 in f16/bf16. Attention
    is judged the same way (a wrong mask or a missed rescale moves whole rows)."""
    if op in COMPUTE_BOUND:  # attention: f32 sums over D and Sk in another order, P rounded by torch's kernels
        if not bool(out.isfinite().all()):
            return False
        err = (out.double() - expected.double()).norm() / expected.double().norm().clamp_min(1e-30)
        return err.item() <= (1e-4 if out.dtype == torch.float32 else 1e-2)
    return torch.allclose(out, expected, rtol=1e-3, atol=1e-4, equal_nan=True)


class TooSlow(RuntimeError):
    pass


def measure(step, run, inputs, out, theirs_ms: float, expected, ceiling, device: str = "cuda",
            shape: tuple | None = None, work: int | None = None, variant: tuple | None = None) -> PerformanceResult:
    """``shape``: the bench shape when it is not the first input's (matmul's (M, N, K)); ``work``: the
    FLOPs when the op's record cannot count them from the shape (attention's, causal halved);
    ``variant``: (step name, title suffix) of a production kernel timed under a named strategy."""
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
        attrs={"step": variant[0] if variant else step.name, "number": step.number,
               "title": f"{step.title} [{variant[1]}]" if variant else step.title,
               **({"variant": variant[1]} if variant else {})},
        latency_ms=ours.median_ms, latency_p10_ms=ours.p10_ms, latency_p90_ms=ours.p90_ms, bytes=moved,
        flops=(flops(step.op, shape) if work is None else work) or 0, torch_ms=theirs_ms, ceiling_gbps=ceiling,
        peak_gflops=compute_peak_gflops(device, DTYPE_NAMES[out.dtype], True) if step.op in COMPUTE_BOUND else None,
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


def _report(row, label, work, theirs) -> None:
    rate = (f"{row.gflops / 1e3:7.1f} TFLOP/s  torch {work / theirs / 1e9:7.1f}" if work
            else f"{row.gbps:7.0f} GB/s  torch {theirs * 1e3:8.1f} us")
    print(f"  {label:<52} {row.latency_ms * 1e3:9.1f} us {rate}  {' '.join(row.notes)}", flush=True)


def bench_attention_shape(shape, dtype, todo, runners, ceiling, gen, failures) -> list[PerformanceResult]:
    """attention's steps on one (B, H, Sq, Sk, D, is_causal) shape: query (B, H, Sq, D), key and value
    (B, H, Sk, D), torch's F.scaled_dot_product_attention on the same tensors; the CUDA production
    kernel once per ATTENTION_VARIANTS."""
    import torch.nn.functional as F

    b, h, sq, sk, d, causal = shape
    causal = bool(causal)
    inputs = [torch.randn(size, device="cuda", generator=gen).to(dtype)
              for size in ((b, h, sq, d), (b, h, sk, d), (b, h, sk, d))]
    out = torch.empty(b, h, sq, d, device="cuda", dtype=dtype)
    theirs = time_callable(lambda: F.scaled_dot_product_attention(*inputs, is_causal=causal), "cuda").median_ms
    expected = F.scaled_dot_product_attention(*inputs, is_causal=causal).clone()
    work = 4 * b * h * sq * sk * d // (2 if causal else 1)  # issue 31's count: causal does about half
    rows = []
    for step in todo:
        variants = ATTENTION_VARIANTS if step.production and step.lang == "cuda" else (None,)
        for variant in variants:
            label = (f"{step.key}{'' if variant is None else ' [' + variant[1] + ']'} "
                     f"{'x'.join(map(str, shape))} {DTYPE_NAMES[dtype]}")
            try:
                if step.production:
                    prepared = (attention_variant(step, variant[2], inputs, out, causal) if variant
                                else production_runner(step, inputs, out, {"is_causal": causal}))
                    with prepared as p:
                        row = measure(step, p.run, inputs, out, theirs, expected, ceiling, shape=shape, work=work,
                                      variant=variant[:2] if variant else None)
                else:
                    run = runners.get((step.key, dtype))
                    if run is None:
                        raise RuntimeError("not compiled")
                    row = measure(step, lambda: run(*inputs, out=out, causal=causal), inputs, out, theirs, expected,
                                  ceiling, shape=shape, work=work)
            except Exception as e:  # noqa: BLE001 - one broken step must not cost the others' figures
                failures.append(f"{label}: {type(e).__name__}: {str(e)[:300]}")
                print(f"  {label}: FAILED {failures[-1]}", flush=True)
                continue
            rows.append(row)
            _report(row, label, work, theirs)
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
                bench = bench_attention_shape if op == ATTENTION else functools.partial(bench_shape, op)
                results += bench(shape, dtype, [s for s in todo if s.op == op and dtype in dtypes(op, s.lang)],
                                 runners, ceiling, gen, failures)
    write_results(args.json, results, "cuda", ["scripts/step_bench.py", *sys.argv[1:]], ceiling)
    print(f"{len(results)} rows in {args.json} after {time.perf_counter() - t_start:.0f} s"
          + (f"; {len(failures)} failed:\n" + "\n".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
