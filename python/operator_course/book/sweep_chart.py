"""Charts of the shape sweep (the JSON of tests/run_ops.py --mode sweep --json): per operator, ours
against the better of torch eager and torch.compile, over the shapes the sweep drew.

    python -m operator_course.book.sweep_chart sweep.json -o sweep-softmax.svg --op softmax
    python -m operator_course.book.sweep_chart sweep.json -o charts/      # charts/sweep-<op>.svg, every op

x: the row's size measure (row length for the row ops, elements for the element-wise ones, M*N*K
for matmul), log scale; y: torch's better time over ours (above 1: we are faster), log scale, with
lines at 1.0 and at issue 29's floor of 0.95. One colour per backend, one marker per dtype. Rows
whose result was wrong are not ranked, so not drawn (the title counts them). Drawn as wide as the
site's column (charts.FIGURE_WIDTH_IN at FIGURE_DPI), no text under 11 pt.
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

from operator_course.book.charts import FIGURE_DPI, FIGURE_WIDTH_IN, wrap
from operator_course.book.roofline import BACKEND_STYLE
from operator_runtime_testing.performance import read_results

FLOOR = 0.95                                       # issue 29: every memory-bound row at least this
DTYPE_MARKERS = {"f32": "o", "f16": "s", "bf16": "^"}
# The site's geometry (chapter.py: 6.6 in at 100 dpi, shown unscaled in its 688 px column), text larger
# than the chapters' (11 pt = 15 px there): a scatter is read point by point.
HEIGHT_IN = 4.8
FONT_PT = 11                                       # the smallest text on the chart
X_LABELS = {"row length": "row length (elements along the reduced dim)", "elements": "elements of the output",
            "M*N*K": "M*N*K"}


def sweep_ops(doc: dict) -> list[str]:
    """The operators with rows, in the file's order."""
    return list(dict.fromkeys(r["op"] for r in doc["rows"]))


def _ratio(row: dict) -> float:
    return row.get("ratio", row["speedup"])


def plot_sweep(ax, doc: dict, op: str) -> None:
    """One operator's ratio against size, every backend of the file."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    rows = [r for r in doc["rows"] if r["op"] == op]
    ranked = [r for r in rows if r.get("correct", True) and _ratio(r) > 0]
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    dtypes = [d for d in DTYPE_MARKERS if any(r["dtype"] == d for r in ranked)]
    for backend in backends:
        color = BACKEND_STYLE.get(backend, ("tab:blue", "d"))[0]
        for dtype in dtypes:
            points = [(r["size"], _ratio(r)) for r in ranked if r["backend"] == backend and r["dtype"] == dtype]
            if points:
                ax.scatter([p[0] for p in points], [p[1] for p in points], marker=DTYPE_MARKERS[dtype], s=42,
                           color=color, alpha=0.8, edgecolors="black", linewidths=0.4, zorder=3)
    ax.axhline(1.0, color="black", linewidth=1.2, zorder=2)
    ax.axhline(FLOOR, color="tab:red", linewidth=1.2, linestyle="--", zorder=2)

    ax.set_xscale("log")
    ax.set_yscale("log")
    ratios = [_ratio(r) for r in ranked] or [1.0]
    ax.set_ylim(min(min(ratios), FLOOR) / 1.25, max(max(ratios), 1.0) * 1.25)
    low, high = ax.get_ylim()
    decades = math.log10(high / low)  # label enough ticks to read a ratio off, not so many they collide
    subs = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0) if decades < 1.2 else (1.0, 2.0, 5.0) if decades < 3 else (1.0,)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    measure = next((r.get("size_measure") for r in rows if r.get("size_measure")), "size")
    ax.set_xlabel(X_LABELS.get(measure, measure) + " (log)")
    ax.set_ylabel("torch's best time / ours (log)")
    wrong = len(rows) - len(ranked)
    device = doc.get("device", {}).get("name", "?")
    seed = doc.get("sweep", {}).get("seed")
    title = (f"{op} on {device}" + (f", seed {seed}" if seed is not None else "")
             + (f": {wrong} wrong, not drawn" if wrong else ""))
    ax.set_title(wrap(title, 0.9 * FIGURE_WIDTH_IN * FIGURE_DPI, FONT_PT + 1), fontsize=FONT_PT + 1)
    ax.grid(True, which="major", alpha=0.3)

    # Two rows: the backends (colour) and the reference lines, then the dtypes (marker shape).
    colours = [Patch(color=BACKEND_STYLE.get(b, ("tab:blue",))[0], label=b) for b in backends]
    lines = [Line2D([], [], color="black", linewidth=1.2, label="1x: torch"),
             Line2D([], [], color="tab:red", linewidth=1.2, linestyle="--", label=f"{FLOOR}x: floor")]
    shapes = [Line2D([], [], linestyle="none", marker=DTYPE_MARKERS[d], markersize=8, markerfacecolor="white",
                     markeredgecolor="black", label=d) for d in dtypes]
    top, bottom = colours + lines, shapes
    ncol = max(len(top), len(bottom))
    blank = Line2D([], [], linestyle="none", label=" ")
    top, bottom = top + [blank] * (ncol - len(top)), bottom + [blank] * (ncol - len(bottom))
    ax.legend(handles=[h for pair in zip(top, bottom) for h in pair], loc="upper center", ncol=ncol,
              bbox_to_anchor=(0.5, -0.17), fontsize=FONT_PT, frameon=False, columnspacing=1.2)


def below_floor(doc: dict, op: str) -> str:
    """Markdown: per backend, the median ratio and each drawn shape below the floor, worst first
    (what the chart's points under the dashed line are)."""
    lines = []
    for backend in dict.fromkeys(r["backend"] for r in doc["rows"] if r["op"] == op):
        ranked = [r for r in doc["rows"] if r["op"] == op and r["backend"] == backend
                  and r.get("correct", True) and _ratio(r) > 0]
        if not ranked:
            continue
        median = statistics.median(_ratio(r) for r in ranked)
        below = sorted((r for r in ranked if _ratio(r) < FLOOR), key=_ratio)
        shapes = ", ".join(f"{r['category']} {r['label']} {r['dtype']} {_ratio(r):.3f}x" for r in below)
        lines.append(f"- **{backend}**: median {median:.2f}x over {len(ranked)} shapes; "
                     + (f"{len(below)} below {FLOOR}x: {shapes}" if below else f"none below {FLOOR}x"))
    return "\n".join(lines)


def show_sweeps(op: str) -> None:
    """A chapter's "Beyond the benchmark's shapes": for each committed sweep with rows of ``op``
    (chapter.sweep_files), its chart and beneath it the shapes under the floor."""
    import matplotlib.pyplot as plt
    from IPython.display import Markdown, display

    from operator_course.book.chapter import load, sweep_files

    for path in sweep_files():
        doc = load(path)
        if op in sweep_ops(doc):
            sweep_figure(doc, op)
            plt.show()
            display(Markdown(below_floor(doc, op)))


def sweep_figure(doc: dict, op: str):
    import matplotlib.pyplot as plt

    with plt.rc_context({"font.size": FONT_PT, "axes.labelsize": FONT_PT, "xtick.labelsize": FONT_PT,
                         "ytick.labelsize": FONT_PT, "legend.fontsize": FONT_PT}):
        fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, HEIGHT_IN), dpi=FIGURE_DPI, layout="constrained")
        plot_sweep(ax, doc, op)
    return fig


def draw_charts(doc: dict, output: Path, ops: list[str] | None = None, fmt: str = "svg") -> list[Path]:
    """Write one chart per op: to ``output`` itself for a single op named with a suffix, else
    ``output/sweep-<op>.<fmt>``."""
    import matplotlib.pyplot as plt

    ops = ops or sweep_ops(doc)
    single = len(ops) == 1 and output.suffix
    paths = []
    for op in ops:
        path = output if single else output / f"sweep-{op}.{fmt}"
        path.parent.mkdir(parents=True, exist_ok=True)
        fig = sweep_figure(doc, op)
        fig.savefig(path, bbox_inches="tight")  # as a chapter's inline backend saves it
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="JSON written by tests/run_ops.py --mode sweep --json")
    parser.add_argument("-o", "--output", type=Path, required=True,
                        help="the image (with --op), or a folder for one sweep-<op>.<format> per op")
    parser.add_argument("--op", help="only this operator's chart")
    parser.add_argument("--format", default="svg", choices=("svg", "png", "pdf"), help="for a folder's charts")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    doc = read_results(args.results)
    ops = sweep_ops(doc)
    if args.op and args.op not in ops:
        parser.error(f"{args.results} has no sweep rows for {args.op} (it has {', '.join(ops) or 'none'})")
    if not ops:
        parser.error(f"{args.results} has no sweep rows")
    if not args.op and len(ops) > 1 and args.output.suffix:
        parser.error(f"{args.results} has {len(ops)} ops: name a folder for their charts, or one --op")
    for path in draw_charts(doc, args.output, [args.op] if args.op else ops, args.format):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
