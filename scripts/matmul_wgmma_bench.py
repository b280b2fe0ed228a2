#!/usr/bin/env python3
"""The nvidia backend's matmul kernels against torch.matmul (cuBLAS) on issue 14's goal shapes,
in one process: each OPRT_MATMUL_STRATEGY (read when a descriptor is created) through a
prepared matmul, each result checked against torch before it is timed; one table with TFLOP/s,
% of the H200's dense f16 peak and the ratio to torch.

    python scripts/matmul_wgmma_bench.py [--strategies mma,wgmma,wgmma-pipe] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import torch

import operator_runtime as ort
from operator_runtime_testing.timing import time_callable

PEAK_TFLOPS = 989.5  # H200 dense f16/bf16 tensor-core peak
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (16, 8192, 8192), (128, 8192, 8192)]  # (M, N, K)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strategies", default="mma,wgmma,wgmma-pipe")
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args()
    strategies = args.strategies.split(",")
    rows = []
    print(f"{'shape':<16}{'dtype':<6}{'kernel':<12}{'ms':>9}{'TFLOP/s':>9}{'peak%':>7}{'x torch':>8}  worst rel err",
          flush=True)
    for m, n, k in SHAPES:
        for dtype in (torch.float16, torch.bfloat16):
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            ref = torch.empty(m, n, device="cuda", dtype=dtype)
            out = torch.empty_like(ref)
            torch_ms = time_callable(lambda: torch.matmul(a, b, out=ref), "cuda").median_ms
            flops, shape = 2.0 * m * n * k, f"{m}x{n}x{k}"
            dt = {"float16": "f16", "bfloat16": "bf16"}[str(dtype)[6:]]

            def line(name, ms, err=""):
                print(f"{shape:<16}{dt:<6}{name:<12}{ms:9.4f}{flops / ms / 1e9:9.1f}{100 * flops / ms / 1e9 / PEAK_TFLOPS:7.1f}"
                      f"{torch_ms / ms:8.2f}  {err}", flush=True)

            line("torch", torch_ms)
            scale = ref.float().abs().max().item()
            for strategy in strategies:
                os.environ["OPRT_MATMUL_STRATEGY"] = strategy
                row = {"shape": [m, n, k], "dtype": dt, "strategy": strategy, "torch_ms": torch_ms, "ms": None}
                try:
                    out.fill_(float("nan"))
                    with ort.prepare_matmul(out, a, b, backend="nvidia") as prepared:  # a new descriptor
                        prepared.run()
                        torch.cuda.synchronize()
                        err = ((out.float() - ref.float()).abs().max() / scale).item()
                        row["rel_err"] = err
                        if not err <= 2e-2:  # NaN fails too
                            print(f"{shape:<16}{dt:<6}{strategy:<12}  WRONG: worst error {err:.3g} of max |torch|", flush=True)
                        else:
                            row["ms"] = time_callable(prepared.run, "cuda").median_ms
                            line(strategy, row["ms"], f"{err:.1e}")
                except Exception as e:  # reported, the rest still run
                    row["error"] = f"{type(e).__name__}: {e}"
                    print(f"{shape:<16}{dt:<6}{strategy:<12}  {row['error'][:160]}", flush=True)
                rows.append(row)
            del a, b, ref, out
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(r["ms"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
