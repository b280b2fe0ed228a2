#!/usr/bin/env python3
"""How long the tilelang backend takes to compile each kernel: cold (an empty TileLang disk
cache, so TileLang lowers and the C/CUDA compiler runs) and warm (a new process finding the
kernel in the disk cache). One child process per measurement, so nothing is shared in memory.

    python scripts/tilelang_compile_times.py [--device cuda|cpu] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# (op, call) pairs: each call prepares the op once on a small tensor, which compiles its kernel
CALLS = {
    "copy f32->f16": "ort.copy(x, dtype=torch.float16, backend='tilelang')",
    "vector_add f32": "ort.vector_add(x, x, backend='tilelang')",
    "reduce_sum f32": "ort.reduce_sum(x, dim=-1, backend='tilelang')",
    "softmax f32 (row 1000)": "ort.softmax(x, dim=-1, backend='tilelang')",
}
CHILD = """
import time, torch, operator_runtime as ort
from operator_runtime._internal import tilelang_backend
tilelang_backend._tilelang()  # importing TileLang (~2 s) is not compiling: keep it out of the time
x = torch.randn(4, 1000, device={device!r})
t0 = time.perf_counter()
{call}
if x.is_cuda: torch.cuda.synchronize()
print(time.perf_counter() - t0)
"""


def measure(call: str, device: str, cache: Path) -> float:
    env = {**__import__("os").environ, "TILELANG_CACHE_DIR": str(cache)}
    result = subprocess.run([sys.executable, "-c", CHILD.format(device=device, call=call)], env=env,
                            capture_output=True, text=True, timeout=900)
    if result.returncode:
        raise RuntimeError(result.stderr[-2000:])
    return float(result.stdout.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if __import__("torch").cuda.is_available() else "cpu")
    parser.add_argument("--json", help="write the times to this file")
    args = parser.parse_args()
    rows = []
    print(f"{'kernel':<26}{'cold s':>8}{'warm s':>8}   ({args.device})", flush=True)
    for name, call in CALLS.items():
        with tempfile.TemporaryDirectory() as cache:
            cold = measure(call, args.device, Path(cache))
            warm = measure(call, args.device, Path(cache))
        rows.append({"kernel": name, "device": args.device, "cold_s": round(cold, 3), "warm_s": round(warm, 3)})
        print(f"{name:<26}{cold:8.2f}{warm:8.2f}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
