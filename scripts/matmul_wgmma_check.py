#!/usr/bin/env python3
"""matmul cases for the nvidia backend's wgmma kernel (OPRT_MATMUL_STRATEGY=wgmma unless set):
each case's worst error against a float64 torch reference, relative to sum_k |a||b|, printed
one line per case; exit 1 on any mismatch. Small enough for compute-sanitizer:

    python scripts/matmul_wgmma_check.py [--small]
    compute-sanitizer --tool memcheck python scripts/matmul_wgmma_check.py --small
"""

from __future__ import annotations

import os
import sys
import traceback

os.environ.setdefault("OPRT_MATMUL_STRATEGY", "wgmma")

import torch  # noqa: E402

import operator_runtime as ort  # noqa: E402

# (name, a shape, b shape, a transposed in memory, b transposed in memory)
SMALL = [
    ("1x1x1", (1, 1), (1, 1), False, False),
    ("7x7x8", (7, 8), (8, 7), False, False),
    ("tails 200x264x136", (200, 264), (264, 136), False, False),
    ("a-transposed", (200, 264), (264, 136), True, False),
    ("b-transposed", (200, 264), (264, 136), False, True),
    ("both-transposed", (136, 72), (72, 40), True, True),
    ("batched 2x1032x40x1032", (2, 1032, 40), (2, 40, 1032), False, False),
    ("broadcast a", (37, 24), (4, 24, 16), False, False),
    ("long k 4x65560x8", (4, 65560), (65560, 8), False, False),
]
LARGE = [
    ("exact tiles 256x1024x512", (256, 1024), (1024, 512), False, False),
    ("2048^3", (2048, 2048), (2048, 2048), False, False),
    ("4096^3 a-transposed", (4096, 4096), (4096, 4096), True, False),
]
TOL = {torch.float16: 2e-3, torch.bfloat16: 1e-2}  # ~2 ulps of the output's rounding


def operand(shape, transposed, dtype, gen):
    if not transposed:
        return torch.randn(shape, device="cuda", dtype=dtype, generator=gen)
    t = torch.randn(shape[:-2] + (shape[-1], shape[-2]), device="cuda", dtype=dtype, generator=gen)
    return t.transpose(-1, -2)


def main() -> int:
    cases = SMALL + ([] if "--small" in sys.argv else LARGE)
    gen = torch.Generator(device="cuda").manual_seed(0)
    failed = 0
    print(f"OPRT_MATMUL_STRATEGY={os.environ['OPRT_MATMUL_STRATEGY']} on {torch.cuda.get_device_name()}", flush=True)
    for name, sa, sb, ta, tb in cases:
        for dtype in (torch.float16, torch.bfloat16):
            try:
                a, b = operand(sa, ta, dtype, gen), operand(sb, tb, dtype, gen)
                out = ort.matmul(a, b, backend="nvidia")
                torch.cuda.synchronize()
                ref = torch.matmul(a.double(), b.double())
                scale = torch.matmul(a.double().abs(), b.double().abs()).clamp_min(1e-30)
                err = ((out.double() - ref).abs() / scale).max().item()
                ok = err <= TOL[dtype] and not out.isnan().any().item()
            except Exception:  # a crash is reported per case, then the rest still run
                traceback.print_exc()
                err, ok = float("nan"), False
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name:<28}{str(dtype)[6:]:<9} worst error {err:.2e}", flush=True)
    print(f"{failed} failures" if failed else "all cases match", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
