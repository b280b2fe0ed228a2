#!/usr/bin/env python3
"""Test and benchmark operators on one backend.

    python tests/run_ops.py --op softmax --backend cpu --mode test
    python tests/run_ops.py --op all --backend nvidia,tilelang --mode bench --json data/bench/h200.json

test:  the op's pytest suite (cases x dtypes, properties, C contract) on the backend.
bench: prepared run() against torch on the same shapes in the same run, and on a tiny tensor
       the host time of prepared run() and of the eager call, each against torch's; a table
       while it runs, and JSON (device, clocks, versions, one row per measurement) with --json.
       Several backends (comma-separated) share one run, one copy ceiling and one file.
       --shapes picks cases (e.g. '8192x8192/f16,268435456'); --note labels the rows.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "runtime" / "ops")]

import torch  # noqa: E402

import operator_runtime as ort  # noqa: E402
from bench.harness import benchmark_op, measure_copy_ceiling, shape_selector  # noqa: E402
from conftest import DEVICE, unavailable_reason  # noqa: E402
from operator_runtime_testing.performance import PerformanceResult, write_results  # noqa: E402

COLUMNS = f"{'backend':<9}{'op':<11}{'shape':<16}{'dtype':<6}{'ours ms':>10}{'GB/s':>8}{'torch ms':>10}{'compile':>9}{'ratio':>7}{'ceil%':>7}"


def row_line(r: PerformanceResult) -> str:
    compiled = f"{r.torch_compile_ms:9.4f}" if r.torch_compile_ms else f"{'-':>9}"
    ceil = f"{100 * r.ceiling_fraction:6.0f}%" if r.ceiling_fraction else f"{'-':>7}"
    shape = "x".join(map(str, r.shape)) + ("" if r.attrs.get("dim", -1) == -1 else f" d{r.attrs['dim']}")
    line = (f"{r.op:<11}{shape:<16}{r.dtype:<6}{r.latency_ms:10.4f}{r.gbps:8.0f}{r.torch_ms:10.4f}{compiled}"
            f"{r.speedup:6.2f}x{ceil}")
    if r.op == "matmul" and r.flops:  # compute-bound: FLOP/s is the measure, against the datasheet peak
        peak = f", {100 * r.peak_fraction:.0f}% of peak" if r.peak_fraction else ""
        line += f"  {r.gflops:.0f} GFLOP/s vs torch {r.torch_gflops:.0f}{peak}"
    if r.host_us is not None:
        line += f"  host {r.host_us:.1f} us vs torch {r.torch_host_us:.1f} us"
    if r.eager_host_us is not None:
        line += f", eager {r.eager_host_us:.1f} us vs torch out= {r.torch_out_host_us:.1f} us"
    return line + ("  [" + "; ".join(r.notes) + "]" if r.notes else "")


def run_tests(ops: list[str], backend: str, extra: list[str]) -> int:
    selection = [str(HERE / "runtime" / "ops" / f"test_{op}.py") for op in ops]
    keyword = [] if len(ops) == len(ort.OPS) else ["-k", " or ".join(ops)]
    properties = [str(HERE / "runtime" / "ops" / "test_properties.py"), str(HERE / "runtime" / "test_c_contract.py")]
    cmd = [sys.executable, "-m", "pytest", "-q", "--backend", backend, *selection, *extra]
    code = subprocess.call(cmd)
    return code or subprocess.call([sys.executable, "-m", "pytest", "-q", "--backend", backend, *properties,
                                    *keyword, *extra])


def run_bench(ops: list[str], backends: list[str], args) -> int:
    for backend in backends:
        reason = unavailable_reason(backend)
        if reason:
            print(f"cannot benchmark {backend}: {reason}", file=sys.stderr)
            return 2
    devices = {DEVICE[b] for b in backends}
    if len(devices) > 1:
        print(f"backends {backends} run on different devices {sorted(devices)}; benchmark them separately",
              file=sys.stderr)
        return 2
    device = devices.pop()
    compile_peer = args.torch_compile if args.torch_compile is not None else device == "cuda"
    print(f"measuring the copy ceiling on {device} ...", flush=True)
    ceiling = measure_copy_ceiling(device)
    print(f"copy ceiling: {ceiling:.0f} GB/s (torch copy_, read + write)\n{COLUMNS}", flush=True)
    results = []
    select = shape_selector(args.shapes)
    for op in ops:
        for backend in backends:
            rows = benchmark_op(op, backend, device, torch_compile=compile_peer, full=args.full, ceiling=ceiling,
                                report=lambda msg: print(f"  {msg}", file=sys.stderr, flush=True),
                                select=select, notes=tuple(args.note))
            for r in rows:
                print(f"{backend:<9}" + row_line(r), flush=True)
            results += rows
            if args.json:  # after every op, so a run stopped by a time limit keeps what it measured
                write_results(args.json, results, device, sys.argv, ceiling)
    if args.json:
        print(f"wrote {len(results)} rows to {args.json}")
    return 1 if any("differs" in n for r in results for n in r.notes) else 0


def backend_list(text: str) -> list[str]:
    names = [b.strip() for b in text.split(",") if b.strip()]
    unknown = [b for b in names if b not in ort.BACKENDS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"unknown backend {unknown or text!r}; choose from {', '.join(ort.BACKENDS)}")
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--op", default="all", choices=ort.OPS + ("all",))
    parser.add_argument("--backend", default=None, type=backend_list,
                        help="a backend, or several comma-separated for bench (default: nvidia when a GPU "
                             "is present, else cpu)")
    parser.add_argument("--mode", default="all", choices=("test", "bench", "all"))
    parser.add_argument("--json", help="write benchmark rows to this file")
    parser.add_argument("--torch-compile", dest="torch_compile", action=argparse.BooleanOptionalAction,
                        default=None, help="also time torch.compile'd torch (default: on a GPU)")
    parser.add_argument("--full", action="store_true", help="run GPU-sized benchmark shapes on the CPU too")
    parser.add_argument("--shapes", help="bench only these cases: comma-separated SHAPE or SHAPE/DTYPE, e.g. "
                                         "'8192x8192/f16,256x1048576' (and no host-overhead row)")
    parser.add_argument("--note", action="append", default=[],
                        help="a note added to every bench row, e.g. the kernel strategy chosen (repeatable)")
    args, extra = parser.parse_known_args()
    backends = args.backend or ["nvidia" if ort.is_available("nvidia") else "cpu"]
    ops = list(ort.OPS) if args.op == "all" else [args.op]
    code = 0
    if args.mode in ("test", "all"):
        for backend in backends:
            code = code or run_tests(ops, backend, extra)
    if args.mode in ("bench", "all") and code == 0:
        code = run_bench(ops, backends, args)
    return code


if __name__ == "__main__":
    sys.exit(main())
