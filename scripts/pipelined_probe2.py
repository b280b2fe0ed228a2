"""Probe (GPU): element-wise programs whose loop over a block's tiles is T.Pipelined (1-d tensors:
TMA needs no strides). One JSON line per variant; kept to reproduce data/labs/README.md.
    python3 scripts/pipelined_probe2.py [variant ...]"""
import json
import sys
import time

import torch
import tilelang.language as T
from operator_runtime_testing.lab.kernels import compile_tilelang, guarded_input, guarded, unguard

gpu = torch.cuda.is_available()
dev = "cuda" if gpu else "cpu"


def vadd(dtype, TILE=1024, STEPS=4, stages=2, frag=False, threads=256, idx="int64", cast32=False, notma=False):
    n = T.dynamic("n", idx)

    @T.prim_func
    def vector_add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE * STEPS), **({"threads": threads} if gpu else {})) as bx:
            a = T.alloc_shared((TILE,), dtype)
            b = T.alloc_shared((TILE,), dtype)
            c = T.alloc_fragment((TILE,), dtype)
            first = (T.cast(bx, "int32") if cast32 else bx) * STEPS
            for k in T.Pipelined(STEPS, num_stages=stages):
                if notma:
                    T.copy(A[(first + k) * TILE], a, disable_tma=True)
                    T.copy(B[(first + k) * TILE], b, disable_tma=True)
                else:
                    T.copy(A[(first + k) * TILE], a)
                    T.copy(B[(first + k) * TILE], b)
                for i in T.Parallel(TILE):
                    c[i] = T.cast(T.cast(a[i], "float32") + T.cast(b[i], "float32"), dtype)
                T.copy(c, C[(first + k) * TILE])
    return vector_add


VARIANTS = {"cast32": dict(cast32=True), "n32": dict(idx="int32"), "n32_notma": dict(idx="int32", notma=True),
            "cast32_notma": dict(cast32=True, notma=True), "cast32_s3_2048": dict(cast32=True, TILE=2048, stages=3),
            "cast32_t128_x8": dict(cast32=True, STEPS=8, threads=128, stages=3),"v1024x4s2": {}, "v2048x4s3": dict(TILE=2048, stages=3), "v1024x8s3t128": dict(STEPS=8, stages=3, threads=128),
            "v4096x2s2t512": dict(TILE=4096, STEPS=2, threads=512)}
SIZES = [1, 7, 1023, 1025, 4097, 100003, (1 << 20) + 1]
for name in sys.argv[1:] or list(VARIANTS):
    for dtype, tdt in (("float32", torch.float32), ("float16", torch.float16), ("bfloat16", torch.bfloat16)):
        if not gpu and dtype == "bfloat16":
            continue
        rec = {"variant": name, "dtype": dtype}
        try:
            t0 = time.time()
            k = compile_tilelang(vadd(dtype, **VARIANTS[name]), dev)
            rec["compile_s"] = round(time.time() - t0, 1)
            bad = []
            for n in SIZES:
                a = guarded_input(torch.randn(n).to(tdt), dev)
                b = guarded_input(torch.randn(n).to(tdt), dev)
                buf, c = guarded((n,), tdt, dev)
                k(a, b, c)
                got, before, after = unguard(buf, (n,))
                ref = (a.float() + b.float()).to(tdt)
                if before or after or not torch.equal(got, ref):
                    bad.append([n, before[:3], after[:3], (got.float() - ref.float()).abs().nan_to_num(1e9).max().item()])
            rec["wrong"] = bad
            if gpu and not bad:
                from triton.testing import do_bench
                n = 1 << 26
                a, b, c = (torch.randn(n, device=dev).to(tdt) for _ in range(3))
                ms = do_bench(lambda: k(a, b, c))
                tms = do_bench(lambda: torch.add(a, b, out=c))
                rec.update(ms=ms, GBps=3 * n * a.element_size() / ms / 1e6, torch_ms=tms, ratio=tms / ms)
        except Exception as e:  # noqa: BLE001 - a probe: record every failure
            rec["error"] = (type(e).__name__ + ": " + str(e))[-1500:]
        print(json.dumps(rec), flush=True)
