#!/usr/bin/env python3
"""Test and benchmark operators on one backend.

    python tests/run_ops.py --op softmax --backend cpu --mode test
    python tests/run_ops.py --op all --backend nvidia,tilelang --mode bench --json data/bench/h200.json
    python tests/run_ops.py --op all --backend nvidia,tilelang --mode sweep --seed 1 --json sweep.json

test:  the op's pytest suite (cases x dtypes, properties, C contract) on the backend.
bench: prepared run() against torch on the same shapes in the same run, and on a tiny tensor
       the host time of prepared run() and of the eager call, each against torch's; a table
       while it runs, and JSON (device, clocks, versions, one row per measurement) with --json.
       Several backends (comma-separated) share one run, one copy ceiling and one file.
       --shapes picks cases (e.g. '8192x8192/f16,268435456'); --note labels the rows.
sweep: bench's measurements over shapes drawn by category from --seed (row lengths, vocabulary rows,
       leading and middle dims, broadcasts, views, decode matmuls, ...: tests/bench/sweep.py), each
       checked against float64; a line per shape while it runs, then per op and backend the rows
       below 0.95x the better torch and the median. --per-category N draws (default 4), --quick
       one each under smaller caps, --category picks categories, --max-* / --min-bytes set the
       caps, --draw-only lists the shapes, --resume continues a --json file of the same seed.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "runtime" / "ops")]

import torch  # noqa: E402

import operator_runtime as ort  # noqa: E402
from bench import sweep  # noqa: E402
from bench.harness import benchmark_op, measure_copy_ceiling, shape_selector  # noqa: E402
from conftest import DEVICE, unavailable_reason  # noqa: E402
from operator_runtime_testing.performance import PerformanceResult, read_results, write_results  # noqa: E402

COLUMNS = f"{'backend':<9}{'op':<11}{'shape':<16}{'dtype':<6}{'ours ms':>10}{'GB/s':>8}{'torch ms':>10}{'compile':>9}{'ratio':>7}{'ceil%':>7}"


def row_line(r: PerformanceResult) -> str:
    compiled = f"{r.torch_compile_ms:9.4f}" if r.torch_compile_ms else f"{'-':>9}"
    ceil = f"{100 * r.ceiling_fraction:6.0f}%" if r.ceiling_fraction else f"{'-':>7}"
    shape = "x".join(map(str, r.shape)) + ("" if r.attrs.get("dim", -1) == -1 else f" d{r.attrs['dim']}")
    line = (f"{r.op:<11}{shape:<16}{r.dtype:<6}{r.latency_ms:10.4f}{r.gbps:8.0f}{r.torch_ms:10.4f}{compiled}"
            f"{r.speedup:6.2f}x{ceil}")
    if r.op in ("matmul", "scaled_dot_product_attention") and r.flops:  # compute-bound: FLOP/s against the peak
        peak = f", {100 * r.peak_fraction:.0f}% of peak" if r.peak_fraction else ""
        line += f"  {r.gflops:.0f} GFLOP/s vs torch {r.torch_gflops:.0f}{peak}"
    if r.torch_peers_ms:
        line += "  torch " + ", ".join(f"{name} {ms:.4f} ms" for name, ms in r.torch_peers_ms.items())
    if r.attrs:
        line += "  " + ",".join(f"{k}={v}" for k, v in r.attrs.items() if k != "dim")
    if r.host_us is not None:
        line += f"  host {r.host_us:.1f} us vs torch {r.torch_host_us:.1f} us"
    if r.eager_host_us is not None:
        line += f", eager {r.eager_host_us:.1f} us vs torch out= {r.torch_out_host_us:.1f} us"
    return line + ("  [" + "; ".join(r.notes) + "]" if r.notes else "")


def run_tests(ops: list[str], backend: str, extra: list[str], seed: int | None = None) -> int:
    extra = extra + (["--seed", str(seed)] if seed is not None else [])  # pytest's --seed (conftest.py)
    selection = [str(HERE / "runtime" / "ops" / f"test_{op}.py") for op in ops]
    keyword = [] if len(ops) == len(ort.OPS) else ["-k", " or ".join(ops)]
    properties = [str(HERE / "runtime" / "ops" / "test_properties.py"), str(HERE / "runtime" / "test_c_contract.py")]
    cmd = [sys.executable, "-m", "pytest", "-q", "--backend", backend, *selection, *extra]
    code = subprocess.call(cmd)
    return code or subprocess.call([sys.executable, "-m", "pytest", "-q", "--backend", backend, *properties,
                                    *keyword, *extra])


def bench_device(backends: list[str], args) -> tuple[str, bool] | None:
    """The one device the backends share and whether torch.compile is a peer there; None (said why) if none."""
    for backend in backends:
        reason = unavailable_reason(backend)
        if reason:
            print(f"cannot benchmark {backend}: {reason}", file=sys.stderr)
            return None
    devices = {DEVICE[b] for b in backends}
    if len(devices) > 1:
        print(f"backends {backends} run on different devices {sorted(devices)}; benchmark them separately",
              file=sys.stderr)
        return None
    device = devices.pop()
    return device, args.torch_compile if args.torch_compile is not None else device == "cuda"


def copy_ceiling(device: str) -> float:
    print(f"measuring the copy ceiling on {device} ...", flush=True)
    ceiling = measure_copy_ceiling(device)
    print(f"copy ceiling: {ceiling:.0f} GB/s (torch copy_, read + write)", flush=True)
    return ceiling


def run_bench(ops: list[str], backends: list[str], args) -> int:
    if not (found := bench_device(backends, args)):
        return 2
    device, compile_peer = found
    ceiling = copy_ceiling(device)
    print(COLUMNS, flush=True)
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


def run_sweep(ops: list[str], backends: list[str], args) -> int:
    if not (found := bench_device(backends, args)):
        return 2
    device, compile_peer = found
    limits = sweep.limits_for(device, quick=args.quick, full=args.full, max_elements=args.max_elements,
                              min_bytes=args.min_bytes, max_flops=args.max_flops, max_dim=args.max_dim)
    per_category = args.per_category or (1 if args.quick else 4)
    seed = args.seed
    if seed is None and args.resume and args.json and Path(args.json).exists():  # go on with the file's draw
        seed = read_results(args.json).get("sweep", {}).get("seed")
    seed = seed if seed is not None else random.randrange(2**31)  # a fresh draw unless given
    ceiling = None if args.draw_only else copy_ceiling(device)
    return sweep.run_sweep(ops, backends, device, seed=seed, per_category=per_category, limits=limits,
                           ceiling=ceiling, torch_compile=compile_peer, json_path=args.json, command=sys.argv,
                           only=set(args.category.split(",")) if args.category else None, resume=args.resume,
                           draw_only=args.draw_only, print_fn=lambda line: print(line, flush=True))


def size(text: str) -> int:
    """A size argument: 1048576, 2^20, 2**20, 1<<20 or 4M / 1G (binary)."""
    t = text.strip().replace("**", "^")
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    try:
        if "^" in t:
            base, exp = t.split("^")
            return int(base) ** int(exp)
        if "<<" in t:
            a, b = t.split("<<")
            return int(a) << int(b)
        if t[-1:].upper() in units:
            return int(float(t[:-1]) * units[t[-1].upper()])
        return int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 1048576, 2^20, 1<<20, 4M)") from None


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
    parser.add_argument("--mode", default="all", choices=("test", "bench", "sweep", "all"),
                        help="all: test, then bench (sweep runs only when asked for)")
    parser.add_argument("--json", help="write benchmark rows to this file")
    parser.add_argument("--torch-compile", dest="torch_compile", action=argparse.BooleanOptionalAction,
                        default=None, help="also time torch.compile'd torch (default: on a GPU)")
    parser.add_argument("--full", action="store_true", help="run GPU-sized benchmark shapes on the CPU too")
    parser.add_argument("--shapes", help="bench only these cases: comma-separated SHAPE or SHAPE/DTYPE, e.g. "
                                         "'8192x8192/f16,256x1048576' (and no host-overhead row)")
    parser.add_argument("--note", action="append", default=[],
                        help="a note added to every bench row, e.g. the kernel strategy chosen (repeatable)")
    parser.add_argument("--gpu", type=int, help="the GPU of this host to run on (default: the current one), so a run "
                        "can take a spare GPU while another is busy")
    parser.add_argument("--seed", type=int, help="sweep: the seed its shapes are drawn from (default: a fresh one, "
                                                 "printed); test: pytest's --seed for the random inputs")
    sweeping = parser.add_argument_group("sweep (--mode sweep; tests/bench/sweep.py)")
    sweeping.add_argument("--per-category", dest="per_category", type=int, help="shapes drawn per category (default 4)")
    sweeping.add_argument("--quick", action="store_true", help="one shape per category, at most 2^24 elements and "
                                                               "2^36 FLOPs (CI)")
    sweeping.add_argument("--category", help="only these categories (comma-separated, e.g. 'vocab,dim0')")
    sweeping.add_argument("--max-elements", dest="max_elements", type=size,
                          help="largest input (default 2^28; 2^24 with --quick or on the CPU)")
    sweeping.add_argument("--min-bytes", dest="min_bytes", type=size,
                          help="smallest first input outside the 'small' categories (default 4M)")
    sweeping.add_argument("--max-flops", dest="max_flops", type=size, help="matmul's largest 2MNK (default 2^40)")
    sweeping.add_argument("--max-dim", dest="max_dim", type=size, help="matmul's largest M, N, K (default 16384)")
    sweeping.add_argument("--draw-only", dest="draw_only", action="store_true", help="list the drawn shapes, time none")
    sweeping.add_argument("--resume", action="store_true",
                          help="continue the --json file of an earlier run with the same seed and limits")
    args, extra = parser.parse_known_args()
    if extra and args.mode == "sweep":  # test passes them to pytest; a sweep has no use for them
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.gpu is not None:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if not 0 <= args.gpu < count:
            parser.error(f"--gpu {args.gpu}: this host has {count} GPU(s)")
        torch.cuda.set_device(args.gpu)  # the benchmarks' "cuda" tensors, events and kernels go there
        os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[args.gpu] \
            if os.environ.get("CUDA_VISIBLE_DEVICES") else str(args.gpu)  # the test mode's pytest sees that one
    backends = args.backend or ["nvidia" if ort.is_available("nvidia") else "cpu"]
    ops = list(ort.OPS) if args.op == "all" else [args.op]
    code = 0
    if args.mode in ("test", "all"):
        for backend in backends:
            code = code or run_tests(ops, backend, extra, args.seed)
    if args.mode in ("bench", "all") and code == 0:
        code = run_bench(ops, backends, args)
    if args.mode == "sweep":
        code = run_sweep(ops, backends, args)
    return code


if __name__ == "__main__":
    sys.exit(main())
