"""Roofline charts from benchmark results (the JSON that tests/run_ops.py --json writes).

    python -m operator_course.book.roofline data/bench/h200.json -o roofline.svg [--op softmax]

Two panels, one above the other: achieved bandwidth against bytes moved (log x), one series per
backend and one for torch, with the measured copy ceiling and the datasheet peak as lines; and the
classic intensity roofline (GFLOP/s against FLOP/byte, log-log) with both ceilings. Drawn as wide as
the site's column (charts.FIGURE_WIDTH_IN), so a chapter shows it at its own size.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from operator_runtime_testing.performance import read_results

from .charts import legend_above, new_chart

# Datasheet peaks by device name: HBM bandwidth (GB/s), non-tensor FP32 and dense FP16/BF16
# tensor-core throughput (GFLOP/s). NVIDIA H200 SXM datasheet (nvidia.com/en-us/data-center/h200):
# 4.8 TB/s HBM3e, 67 TFLOPS FP32, "FP16 Tensor Core 1,979 TFLOPS" and BF16 the same, both footnoted
# "with sparsity": dense (2:4 sparsity doubles the rate) is half, 989.5 TFLOPS.
DATASHEET = {
    "NVIDIA H200": {"bandwidth_gbps": 4800.0, "fp32_gflops": 67_000.0, "tensor_f16_gflops": 989_500.0},
}


def compute_peak_gflops(device: str, dtype: str, tensor_cores: bool) -> float | None:
    """The datasheet peak a row on ``device`` is measured against: dense f16/bf16 tensor cores for
    an op that uses them (matmul), else FP32; None for a device not in DATASHEET (or the CPU)."""
    import torch

    if torch.device(device).type != "cuda":
        return None
    peaks = DATASHEET.get(torch.cuda.get_device_name(torch.device(device)), {})
    return peaks.get("tensor_f16_gflops" if tensor_cores and dtype in ("f16", "bf16") else "fp32_gflops")

BACKEND_STYLE = {"nvidia": ("tab:green", "o"), "tilelang": ("tab:purple", "s"), "cpu": ("tab:gray", "^"),
                 "torch": ("tab:orange", "x")}


def datasheet(doc: dict) -> dict:
    return DATASHEET.get(doc.get("device", {}).get("name", ""), {})


def row_compute_peak(doc: dict, row: dict) -> float | None:
    """A results row's datasheet compute peak (GFLOP/s): tensor cores for matmul in f16/bf16, else FP32."""
    peaks = datasheet(doc)
    tensor = row["op"] == "matmul" and row["dtype"] in ("f16", "bf16")
    return peaks.get("tensor_f16_gflops" if tensor else "fp32_gflops")


def _rows(doc: dict, op: str | None) -> list[dict]:
    # Rows timing the call path (tiny tensors) say nothing about bandwidth.
    return [r for r in doc["rows"] if (op is None or r["op"] == op) and r["bytes"] >= 1 << 20]


def plot_bandwidth(ax, doc: dict, op: str | None = None) -> None:
    rows = _rows(doc, op)
    series: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        series.setdefault(r["backend"], []).append((r["bytes"], r["gbps"]))
        series.setdefault("torch", []).append((r["bytes"], r["torch_gbps"]))
    for name, points in series.items():
        color, marker = BACKEND_STYLE.get(name, ("tab:blue", "d"))
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, linestyle="none", color=color,
                label=name if name == "torch" else f"ours ({name})")
    if doc.get("copy_ceiling_gbps"):
        ax.axhline(doc["copy_ceiling_gbps"], color="tab:blue", linestyle="--", linewidth=1,
                   label=f"measured copy ceiling {doc['copy_ceiling_gbps']:.0f} GB/s")
    peak = datasheet(doc).get("bandwidth_gbps")
    if peak:
        ax.axhline(peak, color="black", linestyle=":", linewidth=1, label=f"datasheet peak {peak:.0f} GB/s")
    ax.set_xscale("log")
    ax.set_xlabel("bytes moved (each input read once, output written once)")
    ax.set_ylabel("achieved GB/s")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)

    legend_above(ax, f"bandwidth{': ' + op if op else ''} on {doc['device'].get('name', '?')}")


def plot_intensity(ax, doc: dict, op: str | None = None) -> None:
    rows = [r for r in _rows(doc, op) if r["flops"] > 0]
    for r in rows:
        intensity = r["flops"] / r["bytes"]
        color, marker = BACKEND_STYLE.get(r["backend"], ("tab:blue", "d"))
        ax.plot(intensity, r["gflops"], marker=marker, color=color, linestyle="none")
        torch_gflops = r["flops"] / (r["torch_ms"] * 1e-3) / 1e9
        ax.plot(intensity, torch_gflops, marker="x", color=BACKEND_STYLE["torch"][0], linestyle="none")
    bandwidth = doc.get("copy_ceiling_gbps") or datasheet(doc).get("bandwidth_gbps")
    compute = datasheet(doc).get("fp32_gflops")
    # Compute-bound rows (matmul: ~1000 FLOP/byte) reach far right of the memory-bound ops.
    top = max([r["flops"] / r["bytes"] for r in rows] + [2.0**8])
    xs = [2.0**k for k in range(-6, int(math.log2(top)) + 2)]
    if bandwidth:
        roof = [bandwidth * x if not compute else min(bandwidth * x, compute) for x in xs]
        ax.plot(xs, roof, color="tab:blue", linestyle="--", linewidth=1,
                label=f"roof: {bandwidth:.0f} GB/s" + (f", {compute / 1000:.0f} TFLOP/s FP32" if compute else ""))
        tensor = datasheet(doc).get("tensor_f16_gflops")
        if tensor and any(r["op"] == "matmul" for r in rows):  # the roof of rows on tensor cores
            ax.plot(xs, [min(bandwidth * x, tensor) for x in xs], color="tab:red", linestyle=":", linewidth=1,
                    label=f"roof: {tensor / 1000:.0f} TFLOP/s dense FP16/BF16 tensor")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte)")
    ax.set_ylabel("GFLOP/s")
    ax.grid(True, which="both", alpha=0.3)

    legend_above(ax, "intensity roofline (markers: ours; x: torch)")


def roofline_figure(doc: dict, op: str | None = None):
    """The two panels, one above the other, as wide as the site's column (charts.new_chart)."""

    fig, (top, bottom) = new_chart(2, 1, height=7.4)
    plot_bandwidth(top, doc, op)
    plot_intensity(bottom, doc, op)
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="benchmark JSON written by tests/run_ops.py --json")
    parser.add_argument("-o", "--output", type=Path, required=True, help="image to write (.svg, .png, .pdf)")
    parser.add_argument("--op", help="only this operator's rows")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    doc = read_results(args.results)
    if not _rows(doc, args.op):
        parser.error(f"{args.results} has no benchmark rows{' for ' + args.op if args.op else ''} of 1 MiB or more")
    roofline_figure(doc, args.op).savefig(args.output, bbox_inches="tight")  # as a chapter shows it
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
