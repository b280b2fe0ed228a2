#!/usr/bin/env python3
"""Sweep the nvidia softmax / reduce_sum launch shapes against torch, in one process (issue 16).

    python3 scripts/softmax_sweep.py --json $OUT/softmax_sweep.json          # on a GPU
    python3 scripts/softmax_sweep.py --only softmax-f16 --quick
    python3 scripts/softmax_sweep.py --only softmax-long-f32 softmax-long-bf16 softmax-long4m-f32

Each setting is a set of environment overrides read when a descriptor is created
(OPRT_SOFTMAX_CONFIG / OPRT_SOFTMAX_STRATEGY / OPRT_REDUCE_SUM_CONFIG /
OPRT_REDUCE_SUM_STRATEGY, see the kernels' headers): the sweep sets them, prepares a new
descriptor, checks its result against torch (a wrong kernel is reported, not ranked), then
times its run() the way tests/run_ops.py does (operator_runtime_testing.timing: warm-up,
CUDA events, median of 30) beside eager torch on the same tensors (random, never zeros).
One line per setting: ms, GB/s (ideal traffic: read and write once), fraction of the copy
ceiling (torch's copy_ measured in the same run), and torch ms / ours (above 1: faster).

Groups: 8192x8192 f16 and bf16 softmax (RowGroups: threads per row x values per thread
>= 8192, rows per block, staging; Bulk's block shapes), 131072x256 f32 / bf16 softmax
(ShortRows' lanes per row, its opt-in prefetch and waves: SHORT_EXTRAS) and 262144x128 f32 /
bf16 reduce_sum (lanes per row, and its kernels before: "old"). Long rows (issue 16's
read-once goal): 256x1048576 f32 / bf16 and 64x4194304 f32 softmax, the table's choice
against Cluster (a thread-block cluster per row, OPRT_SOFTMAX_STRATEGY=cluster) at other
cluster sizes and shared memory per block (LONG_SETTINGS). The softmax kernels the table no
longer names (a warp per row, RowGrid, RowGroups reading staged values from shared memory)
were deleted after these sweeps; their figures stay in data/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "python")]

import torch  # noqa: E402

SOFTMAX_VARS = ("OPRT_SOFTMAX_CONFIG", "OPRT_SOFTMAX_STRATEGY")
SUM_VARS = ("OPRT_REDUCE_SUM_CONFIG", "OPRT_REDUCE_SUM_STRATEGY")


def row_group_configs(row_len: int, quick: bool) -> list[str]:
    """RowGroups shapes that hold a row of row_len: threads * vals >= row_len, block <= the
    kernel's register bound (1024 threads up to 16 values, 512 above)."""
    out = []
    for vals in (8, 16, 32, 64):
        for threads in (128, 256, 512, 1024):
            if threads * vals < row_len or threads * vals >= 2 * row_len:
                continue  # too short for the row, or half the threads idle
            for rows in (1, 2, 4):
                limit = 1024 if vals <= 16 else 512
                if threads * rows > limit or (quick and rows > 2):
                    continue
                for stages in ((0, 2) if quick else (0, 2, 3)):
                    out.append(f"threads={threads},vals={vals},rows={rows},stages={stages}")
    return out


# ShortRows' opt-in keys (softmax): prefetch (1: the next row's loads in registers before
# this row's reductions; 2, 3: stages in shared memory) and waves (the grid in resident
# grids: 1 persistent, 64 a block per 16..256 rows, scheduled by the hardware)
SHORT_EXTRAS = ("prefetch=1", "prefetch=2", "prefetch=3", "waves=4", "waves=64", "prefetch=1,waves=64",
                "lanes=32,prefetch=1", "lanes=32,waves=64", "lanes=32,prefetch=1,waves=64", "lanes=32,prefetch=2",
                "lanes=16,prefetch=1", "lanes=16,prefetch=1,waves=64")


# Long rows: Cluster's blocks per cluster (cluster=) and shared memory per block in KiB
# (cluster_kib=; default 224: one block per SM; 112: two per SM, more of each run read twice)
LONG_SETTINGS = [{"label": "auto"}, {"label": "cluster", "OPRT_SOFTMAX_STRATEGY": "cluster"}] + [
    {"label": c, "OPRT_SOFTMAX_CONFIG": c} for c in (
        "cluster=16", "cluster=8", "cluster=4", "cluster=16,cluster_kib=192", "cluster=16,cluster_kib=160",
        "cluster=16,cluster_kib=112", "cluster=8,cluster_kib=112")]]


def groups(quick: bool) -> dict[str, dict]:
    lanes = [1, 2, 4, 8, 16, 32]
    short_softmax = [{"label": "auto"}] + [
        {"label": f"lanes={n}", "OPRT_SOFTMAX_CONFIG": f"lanes={n}"} for n in lanes if n >= 4] + [
        {"label": c, "OPRT_SOFTMAX_CONFIG": c} for c in SHORT_EXTRAS]
    short_sum = [{"label": "auto"}, {"label": "old", "OPRT_REDUCE_SUM_STRATEGY": "old"}] + [
        {"label": f"lanes={n}", "OPRT_REDUCE_SUM_CONFIG": f"lanes={n}"} for n in lanes if n >= 2]
    # auto: the table's choice (Bulk where the copy engine takes the rows, else RowGroups
    # 512 threads x 16 values, 1 row, 2 stages)
    long16 = [{"label": "auto"}] + [
        {"label": c, "OPRT_SOFTMAX_CONFIG": c} for c in row_group_configs(8192, quick)]
    # Bulk (softmax_bulk.cuh): whole rows by the copy engine, block shapes by strategy name
    bulk = [{"label": "auto"}] + [{"label": name, "OPRT_SOFTMAX_STRATEGY": name}
                                  for name in ("bulk", "bulk-512", "bulk-128", "bulk-256-2", "bulk-256-6", "bulk-1024")]
    return {
        "softmax-bulk-f16": {"op": "softmax", "shape": (8192, 8192), "dtype": torch.float16, "settings": bulk},
        "softmax-bulk-bf16": {"op": "softmax", "shape": (8192, 8192), "dtype": torch.bfloat16, "settings": bulk},
        "softmax-bulk-f32": {"op": "softmax", "shape": (8192, 8192), "dtype": torch.float32, "settings": bulk},
        "softmax-bulk-f16-4096": {"op": "softmax", "shape": (16384, 4096), "dtype": torch.float16, "settings": bulk},
        "softmax-f16": {"op": "softmax", "shape": (8192, 8192), "dtype": torch.float16, "settings": long16},
        "softmax-bf16": {"op": "softmax", "shape": (8192, 8192), "dtype": torch.bfloat16, "settings": long16},
        "softmax-short-f32": {"op": "softmax", "shape": (131072, 256), "dtype": torch.float32, "settings": short_softmax},
        "softmax-short-bf16": {"op": "softmax", "shape": (131072, 256), "dtype": torch.bfloat16,
                               "settings": short_softmax},
        "reduce_sum-short-f32": {"op": "reduce_sum", "shape": (262144, 128), "dtype": torch.float32,
                                 "settings": short_sum},
        "reduce_sum-short-bf16": {"op": "reduce_sum", "shape": (262144, 128), "dtype": torch.bfloat16,
                                  "settings": short_sum},
        "softmax-long-f32": {"op": "softmax", "shape": (256, 1048576), "dtype": torch.float32,
                             "settings": LONG_SETTINGS},
        "softmax-long-bf16": {"op": "softmax", "shape": (256, 1048576), "dtype": torch.bfloat16,
                              "settings": LONG_SETTINGS},
        "softmax-long4m-f32": {"op": "softmax", "shape": (64, 4194304), "dtype": torch.float32,
                               "settings": LONG_SETTINGS},
    }


def set_env(setting: dict) -> None:
    for var in SOFTMAX_VARS + SUM_VARS:
        os.environ.pop(var, None)
    for key, value in setting.items():
        if key != "label":
            os.environ[key] = value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write every row here (default: $OUT/softmax_sweep.json when OUT is set)")
    parser.add_argument("--only", nargs="*", help="group names (default: all but the softmax-long ones, which "
                        "take --only: they add ~1 GiB tensors and half a minute)")
    parser.add_argument("--quick", action="store_true", help="fewer RowGroups shapes (rows <= 2, stages 0 or 2)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("softmax_sweep.py times the nvidia kernels on a GPU; this machine has none", file=sys.stderr)
        return 2
    import operator_runtime as ort
    from bench.harness import measure_copy_ceiling
    from operator_runtime_testing.timing import time_callable

    t_start = time.perf_counter()
    ceiling = measure_copy_ceiling("cuda")
    print(f"copy ceiling: {ceiling:.0f} GB/s (torch copy_, read + write)", flush=True)
    gen = torch.Generator(device="cuda").manual_seed(0)
    rows, bad = [], 0
    todo = groups(args.quick)
    for name in args.only or [n for n in todo if not n.startswith("softmax-long")]:
        g = todo[name]
        shape, dtype, op = g["shape"], g["dtype"], g["op"]
        x = torch.randn(shape, device="cuda", dtype=torch.float32, generator=gen).to(dtype)
        if op == "softmax":
            ref = lambda: torch.softmax(x, -1)  # noqa: E731
            out = torch.empty_like(x)
            bytes_moved = 2 * x.numel() * x.element_size()
            prepare = lambda: ort.prepare_softmax(out, x, -1, backend="nvidia")  # noqa: E731
        else:
            ref = lambda: x.sum(-1)  # noqa: E731
            out = torch.empty(shape[0], device="cuda", dtype=dtype)
            bytes_moved = (x.numel() + shape[0]) * x.element_size()
            prepare = lambda: ort.prepare_reduce_sum(out, x, -1, backend="nvidia")  # noqa: E731
        expected = ref().float()
        torch_ms = time_callable(ref, "cuda").median_ms
        print(f"\n== {name}: {op} {'x'.join(map(str, shape))} {str(dtype).removeprefix('torch.')}; "
              f"torch {torch_ms:.4f} ms ({bytes_moved / torch_ms / 1e6:.0f} GB/s)", flush=True)
        print(f"{'setting':<44}{'ms':>9}{'GB/s':>8}{'ceil%':>7}{'torch/ours':>11}", flush=True)
        for setting in g["settings"]:
            lanes = next((int(kv.partition("=")[2]) for v in setting.values() for kv in v.split(",")
                          if kv.startswith("lanes=")), None)
            if lanes and lanes * 8 * (16 // x.element_size()) < shape[1]:
                continue  # too few lanes for the row (8 packs each at most): the kernel picks its own
            set_env(setting)
            row = {"group": name, "op": op, "shape": list(shape), "dtype": str(dtype).removeprefix("torch."),
                   "setting": setting["label"], "env": {k: v for k, v in setting.items() if k != "label"},
                   "torch_ms": torch_ms, "copy_ceiling_gbps": ceiling}
            try:
                with prepare() as prepared:
                    out.fill_(float("nan"))
                    prepared.run()
                    torch.cuda.synchronize()
                    tol = 1e-5 if dtype == torch.float32 else 1e-2
                    if op == "reduce_sum":
                        tol = 1e-3 * shape[1] ** 0.5 if dtype == torch.float32 else 0.5
                    err = (out.float() - expected).abs().max().item()
                    row["max_abs_err"] = err
                    if not err <= tol:  # NaN too
                        raise AssertionError(f"wrong result: max abs error {err:.3g} > {tol:.3g}")
                    ms = time_callable(prepared.run, "cuda").median_ms
            except Exception as e:  # noqa: BLE001 - a failing setting is a result, the sweep goes on
                bad += 1
                row["error"] = f"{type(e).__name__}: {e}"
                print(f"{setting['label']:<44}  ERROR {row['error'][:200]}", flush=True)
                rows.append(row)
                continue
            gbps = bytes_moved / ms / 1e6
            row.update(ms=ms, gbps=gbps, ceiling_fraction=gbps / ceiling, torch_ratio=torch_ms / ms)
            rows.append(row)
            print(f"{setting['label']:<44}{ms:9.4f}{gbps:8.0f}{100 * gbps / ceiling:6.0f}%{torch_ms / ms:10.2f}x",
                  flush=True)
        set_env({})
        best = min((r for r in rows if r["group"] == name and "ms" in r), key=lambda r: r["ms"], default=None)
        if best:
            print(f"best {name}: {best['setting']} {best['ms']:.4f} ms, {100 * best['ceiling_fraction']:.0f}% of the "
                  f"ceiling, {best['torch_ratio']:.2f}x torch", flush=True)
    path = args.json or (os.path.join(os.environ["OUT"], "softmax_sweep.json") if os.environ.get("OUT") else None)
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                                          "copy_ceiling_gbps": ceiling, "rows": rows}, indent=1))
        print(f"wrote {path}")
    print(f"sweep: {len(rows)} settings, {bad} failed, {time.perf_counter() - t_start:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
