#!/usr/bin/env python3
"""The laptop's speed estimate (operator_course/lab/estimate.py) against the GPU it models: for
each lab's CUDA solution and the slow kernels that pass every laptop check (tests/labs/
slow_kernels.py), the estimate's predicted fraction of the copy bandwidth beside the fraction the
kernel reaches on this GPU at the benchmark shape, timed by the grader's harness (verified_timing:
every call checked, L2 flushed, torch's peer and the copy ceiling measured in the same run). Run on
a GPU machine; what it prints belongs in book/measuring.md.

    python scripts/estimate_vs_gpu.py --json estimate-vs-gpu.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the labs' solutions and slow kernels

from labs.slow_kernels import SLOW  # noqa: E402
from labs.solutions import cuda_solutions  # noqa: E402
from operator_course.cuda import cuda_build  # noqa: E402
from operator_course.lab import estimate  # noqa: E402
from operator_runtime_testing import verified_timing  # noqa: E402
from operator_runtime_testing.operators import get  # noqa: E402


MEMORY_BOUND = ("elementwise", "rows")  # the kinds the estimate models (a compute-bound lab gets none)


def kernels() -> dict[str, tuple[str, str]]:
    """name -> (op, CUDA source): the memory-bound labs' solutions, then the slow variants."""
    out = {f"{op} (lab solution)": (op, source) for op, source in cuda_solutions().items() if get(op).kind in MEMORY_BOUND}
    out.update({name: (op, source) for name, (op, source, _) in SLOW.items()})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        parser.error("needs a GPU: the estimate is compared with a measurement")
    rows = []
    print(f"{'kernel':32} {'estimate':>9} {'measured':>9} {'GB/s':>7} {'torch GB/s':>10}  limit named")
    for name, (op, source) in kernels().items():
        guess = estimate.estimate(op, source)
        bench = tuple(get(op).bench_shape)
        try:
            built = cuda_build.build(op, source)
            m = verified_timing.measure(op, lambda inputs, out: built(*inputs, out=out), "cuda", args.seed,
                                        shapes=[bench])
        except AssertionError as e:  # a build error, a wrong result or an impossible time: said, and the next one
            rows.append({"kernel": name, "op": op, "estimate": round(guess.fraction, 4), "error": str(e)[:500]})
            print(f"{name:32} {guess.fraction:9.3f}  not measured: {str(e).splitlines()[0][:120]}", flush=True)
            continue
        shape = m.shapes[0]
        ours, theirs = shape.rate(shape.ours_ms), shape.rate(shape.torch_ms)
        row = {"kernel": name, "op": op, "shape": list(bench), "estimate": round(guess.fraction, 4),
               "measured": round(ours / m.ceiling, 4), "gbps": round(ours, 1), "torch_gbps": round(theirs, 1),
               "ceiling_gbps": round(m.ceiling, 1), "limit": guess.limit, "hint": guess.hint}
        rows.append(row)
        print(f"{name:32} {row['estimate']:9.3f} {row['measured']:9.3f} {ours:7.0f} {theirs:10.0f}  {guess.limit}",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                                         "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
