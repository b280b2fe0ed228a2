"""Probe (GPU): which T.Pipelined formulation of a row-sum compiles and is right on this machine.
Writes one JSON line per variant to stdout; kept to reproduce data/labs/README.md (TileLang 0.1.15)."""
import json
import sys
import time

import torch
import tilelang.language as T
from operator_runtime_testing.lab.kernels import compile_tilelang

TILE = 1024
gpu = torch.cuda.is_available()
dev = "cuda" if gpu else "cpu"


def program(dtype, idx="int64", disable_tma=False, cast_loop=False, stages=2, threads=256):
    rows, row_len = T.dynamic("rows", idx), T.dynamic("row_len", idx)

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, **({"threads": threads} if gpu else {})) as row:
            s = T.alloc_shared((TILE,), dtype)
            x = T.alloc_fragment((TILE,), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(total)
            tiles = T.ceildiv(row_len, TILE)
            if cast_loop:
                tiles = T.cast(tiles, "int32")
            for k in T.Pipelined(tiles, num_stages=stages):
                if disable_tma:
                    T.copy(X[row, k * TILE], s, disable_tma=True)
                else:
                    T.copy(X[row, k * TILE], s)
                for j in T.Parallel(TILE):
                    x[j] = T.if_then_else(k * TILE + j < row_len, T.cast(s[j], "float32"), 0.0)
                T.reduce_sum(x, total, dim=0, clear=False)
            Y[row] = T.cast(total[0], dtype)
    return reduce_sum


VARIANTS = {
    "i64": dict(),
    "i64_notma": dict(disable_tma=True),
    "i64_notma_castloop": dict(disable_tma=True, cast_loop=True),
    "i64_castloop": dict(cast_loop=True),
    "i32": dict(idx="int32"),
    "i32_notma": dict(idx="int32", disable_tma=True),
    "i64_notma_castloop_s3": dict(disable_tma=True, cast_loop=True, stages=3),
}
SHAPES = [(1, 1), (3, 7), (5, 1023), (4, 1025), (7, 3001), (2, 4096), (3, 5000)]
only = sys.argv[1:] or list(VARIANTS)
for name in only:
    for dtype, tdt in (("float32", torch.float32), ("float16", torch.float16)):
        rec = {"variant": name, "dtype": dtype}
        try:
            t0 = time.time()
            k = compile_tilelang(program(dtype, **VARIANTS[name]), dev)
            rec["compile_s"] = round(time.time() - t0, 1)
            bad = []
            for shape in SHAPES:
                x = torch.randn(shape, device=dev).to(tdt)
                y = torch.full((shape[0],), float("nan"), device=dev, dtype=tdt)
                k(x, y)
                if gpu:
                    torch.cuda.synchronize()
                ref = x.float().sum(-1)
                if not torch.allclose(y.float(), ref, rtol=1e-2 if dtype == "float16" else 1e-4, atol=1e-2):
                    bad.append([shape, (y.float() - ref).abs().max().item()])
            rec["wrong"] = bad
            if gpu and not bad:
                x = torch.randn(4096, 32768, device=dev).to(tdt)
                y = torch.empty(4096, device=dev, dtype=tdt)
                from triton.testing import do_bench
                ms = do_bench(lambda: k(x, y))
                rec["ms_4096x32768"] = ms
                rec["GBps"] = x.numel() * x.element_size() / ms / 1e6
                rec["torch_ms"] = do_bench(lambda: torch.sum(x, -1, out=y))
        except Exception as e:  # noqa: BLE001 - a probe: record every failure
            rec["error"] = (type(e).__name__ + ": " + str(e))[-1500:]
        print(json.dumps(rec), flush=True)
