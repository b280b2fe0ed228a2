"""Measuring one operator on one backend against torch, shape by shape (cases.benchmark_cases()).

Ours is the steady state a user gets: a prepared descriptor's run(). Torch (the record's
torch_call) is measured on the same tensors in the same process, eager and (optionally)
torch.compile'd; FLOPs are the record's too (operators/<op>.py). An op whose benchmark draws
its own inputs has a module in tests/bench/ (matmul's: shapes are (M, N, K)). On a tiny
tensor, host time per call: prepared run() and the eager call (ort.<op>(..., out=)), each
beside torch's.
"""

from __future__ import annotations

import importlib
import math
from typing import Callable

import torch

import operator_runtime as ort
from cases import load
from operator_runtime_testing.operators import get
from operator_runtime_testing.performance import PerformanceResult
from operator_course.book.roofline import compute_peak_gflops
from operator_runtime_testing.timing import host_time_us, time_callable
from operator_runtime_testing.tolerances import bench_tolerance

CPU_MAX_ELEMENTS = 1 << 24  # bigger shapes are GPU-sized; --full runs them on the CPU anyway
TINY_SHAPE = (8,)           # for host overhead: the kernel is negligible, the call is not
DTYPE_NAMES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}


def measure_copy_ceiling(device: str) -> float:
    """Achieved GB/s of torch's copy at the largest size we bench (read + write once)."""
    n = (1 << 28) if torch.device(device).type == "cuda" else CPU_MAX_ELEMENTS
    a = torch.randn(n, device=device)
    o = torch.empty_like(a)
    t = time_callable(lambda: o.copy_(a), device)
    return 2 * n * 4 / (t.median_ms * 1e-3) / 1e9


def shape_selector(text: str | None) -> Callable[[object], bool] | None:
    """--shapes: comma-separated SHAPE or SHAPE/DTYPE ("8192x8192/f16,268435456"); None: all."""
    if not text:
        return None
    wanted = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        shape, _, dtype = item.partition("/")
        if dtype and dtype not in DTYPE_NAMES.values():
            raise ValueError(f"--shapes item {item!r}: dtype {dtype!r} is not one of {sorted(DTYPE_NAMES.values())}")
        wanted.append((shape, dtype))

    def selected(case) -> bool:
        label = "x".join(map(str, case.shape))
        return any(label == shape and dtype in ("", DTYPE_NAMES[case.dtype]) for shape, dtype in wanted)
    return selected


def benchmark_op(op: str, backend: str, device: str, *, torch_compile: bool, full: bool, ceiling: float | None,
                 report: Callable[[str], None], select: Callable[[object], bool] | None = None,
                 notes: tuple[str, ...] = ()) -> list[PerformanceResult]:
    """select: only the benchmark cases it accepts, and no host-overhead row (--shapes);
    notes: added to every row (e.g. which kernel strategy an environment variable chose)."""
    cases, bench, record = load(op), _bench_module(op), get(op)
    api, prepare = getattr(ort, cases.API), getattr(ort, cases.PREPARE)
    compiled = torch.compile(record.torch_call) if torch_compile else None
    gen = torch.Generator().manual_seed(0)
    results = []
    todo = cases.benchmark_cases()
    if select is not None:
        todo = [c for c in todo if select(c)]
    for i, case in enumerate(todo, 1):
        label = f"[{i}/{len(todo)}] {op} {'x'.join(map(str, case.shape))} {DTYPE_NAMES[case.dtype]} {case.attrs or ''}"
        if device == "cpu" and math.prod(case.shape) > CPU_MAX_ELEMENTS and not full:
            report(f"{label}: skipped on the CPU (over 2^24 elements; --full runs it)")
            continue
        report(f"{label}: measuring")
        inputs = _inputs(bench, case.shape, case.dtype, case.inputs, device, gen)
        try:
            out = api(*inputs, **case.attrs, backend=backend)
        except ort.UnsupportedError as refused:  # e.g. a layout the tilelang backend does not express
            report(f"{label}: skipped, {refused}")
            continue
        row = _measure(op, backend, device, case.attrs, inputs, out, prepare, bench, compiled, ceiling)
        row.notes += list(notes)
        results.append(row)
        del inputs, out
    if select is not None:
        return results
    # Host overhead: on a tiny tensor the time is all call path, ours against eager torch.
    x = _inputs(bench, getattr(bench, "TINY_SHAPE", TINY_SHAPE), torch.float32, todo[0].inputs, device, gen)
    attrs = {k: -1 for k in todo[0].attrs}
    try:
        out = api(*x, **attrs, backend=backend)
    except ort.UnsupportedError as refused:
        report(f"{op} host overhead: skipped, {refused}")
        return results
    out_torch = torch.empty_like(out)
    row = _measure(op, backend, device, attrs, x, out, prepare, bench, None, ceiling)
    with prepare(out, *x, **attrs, backend=backend) as p:
        row.host_us = host_time_us(p.run, device)
    row.torch_host_us = host_time_us(lambda: record.torch_call(torch.empty_like(out), *x, **attrs), device)
    # Eager: the call a user writes, into an out it owns, against torch's call writing into out.
    row.eager_host_us = host_time_us(lambda: api(*x, **attrs, out=out, backend=backend), device)
    row.torch_out_host_us = host_time_us(lambda: record.torch_call(out_torch, *x, **attrs), device)
    results.append(row)
    return results


def _bench_module(op: str):
    """tests/bench/<op>.py where the op's benchmark draws its own inputs, else None."""
    try:
        return importlib.import_module(f"bench.{op}")
    except ModuleNotFoundError as e:
        if e.name != f"bench.{op}":
            raise
        return None


def _inputs(bench, shape, dtype, count, device, gen) -> list[torch.Tensor]:
    """The op's inputs for a benchmark shape: ``count`` tensors of ``shape``, unless the bench
    module makes its own (matmul: shape is (M, N, K), the inputs (M, K) and (K, N))."""
    if bench is not None and hasattr(bench, "make_inputs"):
        return bench.make_inputs(shape, dtype, device, gen)
    return [torch.randn(shape, generator=gen).to(device=device, dtype=dtype) for _ in range(count)]


def _measure(op, backend, device, attrs, inputs, out, prepare, bench, compiled, ceiling) -> PerformanceResult:
    torch_out = torch.empty_like(out)
    notes = []
    with prepare(out, *inputs, **attrs, backend=backend) as p:
        ours = time_callable(p.run, device)
    record = get(op)
    theirs = time_callable(lambda: record.torch_call(torch_out, *inputs, **attrs), device)
    expected = record.torch_call(torch_out, *inputs, **attrs)
    rtol, atol = bench_tolerance(out.dtype)
    if not torch.allclose(out.float(), expected.float(), rtol=rtol, atol=atol, equal_nan=True):
        notes.append("result differs from torch")  # a fast wrong kernel must not look good
    compiled_ms = None
    if compiled is not None:
        try:
            compiled_ms = time_callable(lambda: compiled(torch_out, *inputs, **attrs), device).median_ms
        except Exception as e:  # report, do not abort the run: eager torch stays the peer
            notes.append(f"torch.compile failed: {type(e).__name__}")
    peers_ms = {}
    for name, call in (bench.torch_peers(torch_out, inputs, attrs) if hasattr(bench, "torch_peers") else {}).items():
        try:
            peers_ms[name] = time_callable(call, device).median_ms
        except RuntimeError as e:  # a backend that does not take this call (dtype, head dim, GPU): not a peer here
            notes.append(f"torch {name} refused: {str(e).splitlines()[0][:80]}")
    moved = sum(t.numel() * t.element_size() for t in inputs) + out.numel() * out.element_size()
    # Element-wise and row ops count FLOPs per input element; matmul counts its own (2 M N K).
    flops = record.call_flops(inputs, attrs)
    shape = bench.row_shape(inputs) if hasattr(bench, "row_shape") else list(inputs[0].shape)
    dtype = DTYPE_NAMES[inputs[0].dtype]
    return PerformanceResult(
        op=op, backend=backend, shape=shape, dtype=dtype, attrs=dict(attrs),
        latency_ms=ours.median_ms, latency_p10_ms=ours.p10_ms, latency_p90_ms=ours.p90_ms, bytes=moved,
        flops=flops, torch_ms=theirs.median_ms, torch_compile_ms=compiled_ms,
        torch_peers_ms=peers_ms,
        ceiling_gbps=ceiling, peak_gflops=compute_peak_gflops(device, dtype, tensor_cores=record.kind in ("matmul", "attention")),
        notes=notes,
    )
