"""What the course chapters compute from committed benchmark results: tables and charts.

Kept here, not in the pages, so every chapter reads its figures the same way and a
test can exercise the code without building the site.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from operator_runtime_testing.performance import read_results
from .roofline import datasheet, row_compute_peak

def bench_dir() -> Path | None:
    """data/bench of the checkout: $CAMP_BENCH_DIR, else the first one above the working
    directory (chapters run from book/), else beside this package's source tree."""
    if os.environ.get("CAMP_BENCH_DIR"):
        return Path(os.environ["CAMP_BENCH_DIR"])
    for base in (Path.cwd(), *Path.cwd().parents, Path(__file__).resolve().parents[3]):
        if (base / "data" / "bench").is_dir():
            return base / "data" / "bench"
    return None


def results_files() -> list[Path]:
    """Committed results (data/bench/*.json), one per measured device."""
    found = bench_dir()
    if found is None:
        raise FileNotFoundError("no data/bench directory found: run from the course checkout or set CAMP_BENCH_DIR")
    return sorted(found.glob("*.json"))


def sweep_files() -> list[Path]:
    """Committed shape sweeps (data/bench/sweep/*.json: tests/run_ops.py --mode sweep on a GPU)."""
    found = bench_dir()
    return sorted((found / "sweep").glob("*.json")) if found is not None else []


def traffic_table(doc: dict, op: str) -> str:
    """Markdown table: each benchmark shape's bytes, ideal time at peak, ours and torch. The ideal
    is the roofline's: the longer of moving the bytes at peak bandwidth and doing the FLOPs at
    the datasheet compute peak (which only a compute-bound op such as matmul reaches)."""
    peak = datasheet(doc).get("bandwidth_gbps") or doc.get("copy_ceiling_gbps")
    lines = ["| backend | shape | dtype | MB moved | ideal us | ours us | torch us | torch.compile us | ours / torch |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in doc["rows"]:
        if r["op"] != op or r["bytes"] < 1 << 20:
            continue
        shape = "x".join(map(str, r["shape"])) + (f" (dim {r['attrs']['dim']})" if r["attrs"].get("dim", -1) != -1 else "")
        ideal = r["bytes"] / (peak * 1e9) * 1e6 if peak else float("nan")
        compute = row_compute_peak(doc, r)
        if compute and r.get("flops"):
            ideal = max(ideal, r["flops"] / (compute * 1e9) * 1e6)
        compiled = f"{r['torch_compile_ms'] * 1e3:.1f}" if r.get("torch_compile_ms") else "-"
        lines.append(f"| {r['backend']} | {shape} | {r['dtype']} | {r['bytes'] / 1e6:.0f} | {ideal:.1f} | {r['latency_ms'] * 1e3:.1f} | "
                     f"{r['torch_ms'] * 1e3:.1f} | {compiled} | {r['torch_ms'] / r['latency_ms']:.2f}x |")
    return "\n".join(lines)


def describe(doc: dict) -> str:
    d, v = doc["device"], doc["versions"]
    return (f"{d.get('name', '?')} ({d.get('sm_count', '?')} SMs), torch {v.get('torch')}, CUDA {v.get('cuda')}, "
            f"measured {doc['created'][:10]}; copy ceiling {doc['copy_ceiling_gbps']:.0f} GB/s")


def load(path: Path) -> dict:
    return read_results(path)


def ncu_metrics(path: Path, metrics: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """From an ncu text report (``ncu --section ...`` output, as committed under data/ncu/):
    kernel name -> {metric: "value unit"} for the metrics asked for. A kernel is named by its
    function (``softmax_staged<__half>``), without its parameter list."""
    kernels: dict[str, dict[str, str]] = {}
    current = None
    for line in Path(path).read_text().splitlines():
        if line.startswith("  ") and not line.startswith("   ") and "Context" in line:
            head = line.strip().removeprefix("void ").split("(")[0]  # "<unnamed>::softmax_staged<__half>"
            current = kernels.setdefault(re.sub(r"^(<unnamed>::|\w+::)+", "", head).strip(), {})
        elif current is not None:
            for metric in metrics:
                if line.strip().startswith(metric + " "):
                    parts = line.split()
                    unit = parts[-2] if len(parts) >= len(metric.split()) + 2 else ""
                    current[metric] = f"{parts[-1]} {unit if unit not in metric.split() else ''}".strip()
    return kernels
