#!/usr/bin/env python3
"""Time every candidate TileLang kernel variant of the row ops on the benchmark shapes, on this
GPU, against torch in the same run: the data behind the strategy tables in
ops/reduce_sum/tilelang/reduce_sum.py (ROW_STRATEGY) and ops/softmax/tilelang/softmax.py
(PACKED_TILE, CACHED_TILES, ONLINE_THREADS). Each variant's result is checked against torch before it is
timed; a wrong variant is reported, never ranked.

    python scripts/tilelang_tune.py [--json FILE] [--op reduce_sum] [--longest 128]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from operator_runtime._internal import tilelang_backend as tb
from operator_runtime_testing.assertions import assert_matches_torch
from operator_runtime_testing.timing import time_callable
from operator_runtime_testing.tolerances import ATOL_PER_TERM

SHAPES = [(4194304, 7), (1048576, 28), (524288, 60), (262144, 128), (131072, 256), (4096, 1024), (8192, 8192),
          (4096, 32768), (256, 1048576)]
# reduce_sum: (threads, unroll, threads per row): a block per row, or packed rows (a warp each) for
# short rows; softmax: ("packed", tile, lanes) for short rows, ("cached", tile) where the row fits,
# ("online", threads)
REDUCE_CANDIDATES = [(64, 16), (128, 8), (128, 16), (256, 8), (256, 16), (512, 8), (1024, 8), (1024, 16)]
PACKED_CANDIDATES = [(256, 4, 32), (256, 8, 32), (512, 8, 32), (256, 8, 16), (256, 4, 16), (128, 8, 32)]
SHORT_CANDIDATES = [(256, 8, 1), (256, 4, 2), (256, 8, 2), (256, 8, 4), (256, 4, 8), (256, 8, 8)]  # rows up to 128
ONLINE_THREADS = [256, 512, 1024]


def reduce_candidates(row_len: int) -> list[tuple]:
    packed = (SHORT_CANDIDATES if row_len <= 128 else []) + (PACKED_CANDIDATES if row_len <= 1024 else [])
    return packed + [(threads, unroll, threads) for threads, unroll in REDUCE_CANDIDATES]


def softmax_candidates(row_len: int) -> list[tuple]:
    tiles = [t for t in (1024, 2048, 4096, 8192, 16384, 32768) if t >= row_len][:1]
    packed = [("packed", tile, lanes) for tile, lanes in ((32, 4), (64, 8), (128, 16), (256, 32), (256, 16))
              if row_len <= tile]
    return packed + [("cached", t) for t in tiles] + [("online", n) for n in ONLINE_THREADS]


def measure(op: str, variant: tuple, x: torch.Tensor) -> dict:
    out = torch.empty(x.shape[:-1] if op == "reduce_sum" else x.shape, device=x.device)
    # launched as prepared runs launch it (no Python per-call path), so small shapes time the kernel
    launch = tb.DirectLaunch(tb.compiled(op, ("float32",), True, variant), [x, out])
    launch()
    expected = x.double().sum(-1) if op == "reduce_sum" else torch.softmax(x.double(), -1)
    extra = ATOL_PER_TERM * x.double().abs().sum(-1) if op == "reduce_sum" else 0.0
    try:
        assert_matches_torch(out, expected, extra_atol=extra)
        ok = True
    except AssertionError as e:
        print(f"  {op} {variant}: {e}", file=sys.stderr)
        ok = False
    ms = time_callable(launch, "cuda").median_ms if ok else None
    return {"variant": list(variant), "correct": ok, "ms": ms}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write every measurement to this file")
    parser.add_argument("--op", choices=("reduce_sum", "softmax"), help="one op (default: both)")
    parser.add_argument("--longest", type=int, help="only the shapes with rows up to this long")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("tilelang_tune.py needs a GPU", file=sys.stderr)
        return 2
    rows = []
    for op in (args.op,) if args.op else ("reduce_sum", "softmax"):
        for shape in [s for s in SHAPES if args.longest is None or s[-1] <= args.longest]:
            x = torch.randn(shape, device="cuda")
            torch_op = (lambda: x.sum(-1)) if op == "reduce_sum" else (lambda: torch.softmax(x, -1))
            torch_ms = time_callable(torch_op, "cuda").median_ms
            moved = x.numel() * 4 + torch_op().numel() * 4
            picked = tuple(tb.variant(op, True, shape[-1]))
            candidates = reduce_candidates(shape[-1]) if op == "reduce_sum" else softmax_candidates(shape[-1])
            for variant in candidates:
                r = measure(op, variant, x)
                r.update(op=op, shape=list(shape), torch_ms=torch_ms, picked=tuple(variant) == picked,
                         gbps=moved / (r["ms"] * 1e6) if r["ms"] else None)
                rows.append(r)
                speed = f"{r['ms']:.4f} ms {r['gbps']:5.0f} GB/s {torch_ms / r['ms']:5.2f}x torch" if r["ms"] else "WRONG"
                print(f"{op:<11}{'x'.join(map(str, shape)):<13}{str(variant):<18}{speed}"
                      f"{'   <- table picks' if r['picked'] else ''}", flush=True)
            del x
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if any(not r["correct"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
