#!/usr/bin/env python3
"""Host time of one eager call per op and backend, against torch's call in the same process:
what issue 16's "eager calls within 1.5x of torch" is measured with (a 64x64 float32 tensor,
best of 5 rounds of 2000 calls, timing.host_time_us), beside the prepared form's ``run()`` (the
floor: no argument checks, no plan lookup). The full benchmark (tests/run_ops.py
--mode bench) records the same figure beside every bandwidth row; this is the quick view.

    python scripts/eager_host_times.py --backend nvidia,tilelang --json eager.json
"""

from __future__ import annotations

import argparse
import json
import platform

import torch

import operator_runtime as ort
from operator_course.lab.cases import INPUTS, TORCH_OPS, output_shape
from operator_runtime_testing.operators import OPERATORS
from operator_runtime_testing.timing import host_time_us

# the memory-bound operators (one shape fits them all: matmul's inputs differ), torch's peer of each
# and its inputs: from the operators' records (operators/<op>.py)
OPS = [op for op, r in OPERATORS.items() if r.kind != "matmul"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="cpu", help="comma-separated backends")
    parser.add_argument("--shape", default="64x64")
    parser.add_argument("--json")
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    shape = tuple(int(s) for s in args.shape.split("x"))
    rows = []
    for backend in args.backend.split(","):
        for op in OPS:
            x = [torch.randn(shape, device=device) for _ in range(INPUTS[op])]
            out = torch.empty(output_shape(op, shape), device=device)
            extra = {"dim": -1} if OPERATORS[op].kind == "rows" else {}
            ours = host_time_us(lambda: getattr(ort, op)(*x, **extra, out=out, backend=backend), device)
            with getattr(ort, f"prepare_{op}")(out, *x, *extra.values(), backend=backend) as prepared:
                floor = host_time_us(prepared.run, device)
            theirs = host_time_us(lambda: TORCH_OPS[op](out, *x), device)
            rows.append({"backend": backend, "op": op, "shape": list(shape), "eager_host_us": round(ours, 2),
                         "prepared_host_us": round(floor, 2), "torch_host_us": round(theirs, 2),
                         "ratio": round(ours / theirs, 2)})
            print(f"{backend:<9}{op:<11} eager {ours:7.1f} us  prepared {floor:6.1f} us  torch {theirs:6.1f} us"
                  f"  eager/torch {ours / theirs:5.2f}x", flush=True)
    if args.json:
        meta = {"device": torch.cuda.get_device_name() if device == "cuda" else platform.processor() or "cpu",
                "torch": torch.__version__, "python": platform.python_version()}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
