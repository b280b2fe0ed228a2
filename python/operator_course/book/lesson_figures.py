"""The operator chapters' lesson figures, drawn in the build: the steps' progression toward the
copy ceiling (from data/bench/steps/*.json, step_bench.py's output) and the diagrams (which
thread touches which element, a reduction tree, the online-softmax rescaling).

Kept here, not in the pages, so the chapters stay prose and a test can draw every figure without
building the site. Measured figures come only from committed JSON: where there is none, the chart
says so on its face and shows no bar. Every figure is drawn for the site's column (charts.new_chart:
6.6 in at 100 dpi, no text under 8 pt = 11 px, long labels wrapped, never cut;
tests/book/test_chart_legibility.py checks it).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from . import steps as step_files
from .chapter import bench_dir
from .charts import FIGURE_DPI, FIGURE_WIDTH_IN, SMALL_PT, TEXT_PT, TITLE_PT, legend_above, new_chart, wrap
from operator_runtime_testing.performance import read_results

COLORS = {"cuda": "tab:green", "tilelang": "tab:purple"}
# behind a bar's value: the value stays legible where a ceiling or torch line crosses it
VALUE_BOX = {"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 0.5}


def step_results(op: str | None = None) -> list[dict]:
    """Committed step benchmarks (data/bench/steps/*.json: one per run of step_bench.py), those
    with rows of ``op`` when given (a run of some ops says nothing of the others); [] if none."""
    found = bench_dir()
    docs = [read_results(p) for p in sorted((found / "steps").glob("*.json"))] if found else []
    return [d for d in docs if op is None or any(r["op"] == op for r in d["rows"])]


def _rows(doc: dict, op: str) -> dict[tuple, dict]:
    """(shape, dtype, step key) -> row, for ``op``."""
    return {(tuple(r["shape"]), r["dtype"], f"{op}/{r['backend']}/{r['attrs']['step']}"): r
            for r in doc["rows"] if r["op"] == op}


def _columns(rows: dict) -> list[tuple]:
    """The measured (shape, dtype) pairs, largest shape first."""
    return sorted({(shape, dtype) for shape, dtype, _ in rows}, key=lambda c: (-math.prod(c[0]), c[1]))


def _compute_bound(op: str) -> bool:
    """matmul's steps are charted in TFLOP/s (its rows carry flops), the others' in GB/s."""
    return op == "matmul"


def _rate(r: dict, op: str, theirs: bool = False) -> float:
    """A row's TFLOP/s (compute-bound ops) or GB/s; torch's on the same tensors when ``theirs``."""
    if _compute_bound(op):
        return (r["torch_gflops"] if theirs else r["gflops"]) / 1e3
    return r["torch_gbps"] if theirs else r["gbps"]


def step_table(doc: dict | None, op: str) -> str:
    """Markdown: every step of ``op`` with its measured time and bandwidth (TFLOP/s for matmul)
    per shape and dtype, or 'not measured yet'."""
    all_steps = step_files.steps(op)
    rows = _rows(doc, op) if doc else {}
    columns = _columns(rows) or [None]
    unit = "TFLOP/s" if _compute_bound(op) else "GB/s"
    dtyped = _compute_bound(op)  # the other ops' steps are all timed in float32

    def title(column):
        if column is None:
            return "H200"
        return "x".join(map(str, column[0])) + (f" {column[1]}" if dtyped else "") + f" us ({unit})"

    head = "| step | " + " | ".join(title(c) for c in columns) + " |"
    lines = [head, "|" + " --- |" * (len(columns) + 1)]
    for s in all_steps:
        cells = []
        for column in columns:
            r = rows.get((*column, s.key)) if column else None
            other = any(key == s.key for *_, key in rows)  # timed, in another dtype only
            cells.append(f"{r['latency_ms'] * 1e3:.1f} ({_rate(r, op):.{1 if dtyped else 0}f})"
                         + (" wrong!" if r["notes"] else "") if r else "not timed in this dtype" if other
                         else "not measured yet")
        lines.append(f"| {s.label} | " + " | ".join(cells) + " |")
    if doc:
        torch_cells = []
        for column in columns:
            r = next((r for (sh, dt, _), r in rows.items() if (sh, dt) == column), None)
            torch_cells.append(f"{r['torch_ms'] * 1e3:.1f} ({_rate(r, op, theirs=True):.{1 if dtyped else 0}f})"
                               if r else "-")
        lines.append("| torch (eager, same run) | " + " | ".join(torch_cells) + " |")
    return "\n".join(lines)


def step_figures(op: str, number: int | None = None) -> str:
    """One line per measured (step, shape) for the steps numbered ``number`` (None: the production
    steps), in every committed step benchmark; says so when there is none."""
    chosen = [s for s in step_files.steps(op) if (s.production if number is None else s.number == number and not s.production)]
    lines = []
    for doc in step_results(op):
        ceiling = doc.get("copy_ceiling_gbps")
        for (shape, dtype, key), r in sorted(_rows(doc, op).items(),
                                             key=lambda kv: (kv[0][2], -math.prod(kv[0][0]), kv[0][1])):
            for s in chosen:
                if s.key != key:
                    continue
                where = f"{doc['device'].get('name', '?')}: {s.label}, {'x'.join(map(str, shape))}"
                if _compute_bound(op):
                    peak = f", {100 * r['peak_fraction']:.0f}% of the datasheet peak" if r.get("peak_fraction") else ""
                    lines.append(f"{where} {dtype}: {r['latency_ms'] * 1e3:.1f} us, {_rate(r, op):.1f} TFLOP/s{peak}; "
                                 f"torch {_rate(r, op, theirs=True):.1f} TFLOP/s"
                                 + ("  (result differs from torch!)" if r["notes"] else ""))
                    continue
                share = f", {100 * r['gbps'] / ceiling:.0f}% of the copy ceiling" if ceiling else ""
                lines.append(f"{where}: {r['latency_ms'] * 1e3:.1f} us, {r['gbps']:.0f} GB/s{share}; torch "
                             f"{r['torch_ms'] * 1e3:.1f} us" + ("  (result differs from torch!)" if r["notes"] else ""))
    return "\n".join(lines) or "\n".join(f"{s.label}: not measured on the H200 yet" for s in chosen)


def _step_labels(all_steps, width_px: float) -> list[str]:
    """Each step's full label ("CUDA 3: production: row in registers when it fits, else online"),
    wrapped to ``width_px``: never cut short."""
    return [wrap(s.label, width_px, TEXT_PT) for s in all_steps]


# a bar's thickness and the gap between rows, in inches: rows are as tall as their wrapped labels
BAR_IN, GAP_IN = 0.22, 0.1


def _bar_rows(labels: list[str]) -> tuple[np.ndarray, float]:
    """The centres of one bar per label, top to bottom, in inches from the axes' bottom, each row as
    tall as its label's lines (1.25 line spacing) or a bar, with a gap; and the rows' total height."""
    heights = np.array([max((label.count("\n") + 1) * TEXT_PT * 1.25 / 72, BAR_IN) + GAP_IN for label in labels])
    total = float(heights.sum())
    return total - (np.cumsum(heights) - heights / 2), total


def progression_figure(doc: dict | None, op: str):
    """Horizontal bars: each step's achieved GB/s (one panel per measured shape, stacked), the
    run's copy ceiling and torch as lines; for matmul TFLOP/s, one panel per shape and dtype, with
    torch and the datasheet peak of the panel's dtype (tensor cores for f16/bf16, FP32 for f32).
    Without ``doc`` the steps are listed with 'not measured yet'. Drawn for the site's column
    (charts.FIGURE_WIDTH_IN): every step's full name, wrapped, beside its bars in every panel."""
    all_steps = step_files.steps(op)
    rows = _rows(doc, op) if doc else {}
    columns = _columns(rows) or [None]
    compute = _compute_bound(op)
    labels = _step_labels(all_steps, 0.42 * FIGURE_WIDTH_IN * FIGURE_DPI)
    ypos, bars_in = _bar_rows(labels)
    panel = bars_in + 1.15  # the bars, + heading and legend above, ticks and axis label below
    suptitle = None
    if doc:
        d = doc["device"]
        goal = "torch.matmul" if compute else "the copy ceiling"
        suptitle = wrap(f"{d.get('name', '?')}, measured {doc['created'][:10]}: each step toward {goal}",
                        FIGURE_WIDTH_IN * FIGURE_DPI - 20, TITLE_PT)
    fig, axes = new_chart(len(columns), 1, height=panel * len(columns) + (0.3 if suptitle else 0), squeeze=False)
    for ax, column in zip(axes[:, 0], columns):
        ax.set_yticks(ypos, labels, fontsize=TEXT_PT)
        ax.set_ylim(0, bars_in)
        mine = {key: r for (sh, dt, key), r in rows.items() if (sh, dt) == column}
        for y, s in zip(ypos, all_steps):
            r = mine.get(s.key)
            if r is None:
                # a step timed in another dtype only (TileLang's T.gemm steps: not in f32) is not "missing"
                other = any(key == s.key for *_, key in rows)
                ax.text(0.02, y, "not timed in this dtype" if other else "not measured yet", va="center",
                        fontsize=SMALL_PT, color="dimgray", transform=ax.get_yaxis_transform())
                continue
            rate = _rate(r, op)
            ax.barh(y, rate, height=BAR_IN, color=COLORS[s.lang], alpha=1.0 if s.production else 0.6,
                    hatch="//" if r["notes"] else None)
            ax.text(rate, y, f" {rate:.3g}" if compute else f" {rate:.0f}", va="center", fontsize=SMALL_PT,
                    bbox=VALUE_BOX)
        if not doc:
            ax.set_xlim(0, 1)
            ax.set_xticks([])
            # wrapped to about the panel beside the step labels (half the width): a long op name
            # (scaled_dot_product_attention) on one line widened the figure past the site's column
            ax.set_title(wrap(f"{op}: no H200 step figures committed yet", 0.5 * FIGURE_WIDTH_IN * FIGURE_DPI,
                              TITLE_PT), fontsize=TITLE_PT, loc="left")
            continue
        any_row = next(iter(mine.values()), None)
        if compute:
            from .roofline import row_compute_peak

            peak = row_compute_peak(doc, any_row) / 1e3 if any_row and row_compute_peak(doc, any_row) else None
            if any_row:
                ax.axvline(_rate(any_row, op, theirs=True), color="tab:orange", linewidth=1.5,
                           label=f"torch.matmul {_rate(any_row, op, theirs=True):.1f} TFLOP/s")
            if peak:
                ax.axvline(peak, color="tab:blue", linestyle="--", linewidth=1, label=f"datasheet peak {peak:.0f} TFLOP/s")
            # log scale: the naive step and the tensor cores lie three orders of magnitude apart
            rates = [_rate(r, op) for r in mine.values() if _rate(r, op) > 0]
            rates += [_rate(any_row, op, theirs=True)] if any_row else []
            rates += [peak] if peak else []
            ax.set_xscale("log")
            if rates:
                ax.set_xlim(min(rates) / 3, max(rates) * 3)
            heading = f"{op} {'x'.join(map(str, column[0]))} {column[1]}"
        else:
            ceiling = doc.get("copy_ceiling_gbps")
            if ceiling:
                ax.axvline(ceiling, color="tab:blue", linestyle="--", linewidth=1, label=f"copy ceiling {ceiling:.0f} GB/s")
            if any_row:
                ax.axvline(any_row["torch_gbps"], color="tab:orange", linewidth=1.5,
                           label=f"torch {any_row['torch_gbps']:.0f} GB/s")
            ax.set_xlim(0, max([ceiling or 0] + [r["gbps"] for r in rows.values()]) * 1.18)
            heading = f"{op} {'x'.join(map(str, column[0]))} float32"
        ax.set_xlabel("achieved TFLOP/s (2MNK / time), log scale" if compute
                      else "achieved GB/s (bytes read + written / time)")
        legend_above(ax, heading)
    if suptitle:
        fig.suptitle(suptitle, fontsize=TITLE_PT)
    return fig


# ---- diagrams ----

def thread_map_figure(op: str = "copy", n: int = 40, threads: int = 4, grid_blocks: int = 2, vector: int = 4):
    """Which thread touches which element, in each CUDA step of an element-wise op, on a toy GPU
    (blocks of ``threads`` threads; a fixed grid of ``grid_blocks`` blocks from step 2 on;
    ``vector`` elements per 16-byte load). Colour: the thread (block, lane); number: the loop
    iteration in which that thread touches the element (0 = its first)."""
    G = threads * grid_blocks  # threads in a fixed grid
    maps = [
        ("1: one element per thread (grid grows with n)", lambda i: (i, 0)),
        (f"2: grid-stride loop ({grid_blocks} blocks fixed: stride {G})", lambda i: (i % G, i // G)),
        (f"3{' and 4' if op == 'copy' else ''}: {vector}-element (16-byte) vectors, grid-stride: one load moves {vector}",
         lambda i: ((i // vector) % G, (i // vector) // G)),
    ]
    cmap = plt.get_cmap("tab20")
    fig, axes = new_chart(len(maps), 1, height=0.78 * len(maps) + 0.55)
    for ax, (title, who) in zip(axes, maps):
        for i in range(n):
            thread, it = who(i)
            ax.add_patch(plt.Rectangle((i, 0), 0.95, 0.95, color=cmap(thread % 20)))
            ax.text(i + 0.47, 0.47, str(it), ha="center", va="center", fontsize=SMALL_PT)
        ax.set_xlim(0, n)
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.set_xticks(range(0, n + 1, 8))
        ax.set_title(wrap(title, FIGURE_WIDTH_IN * FIGURE_DPI - 20, TEXT_PT), fontsize=TEXT_PT, loc="left")
    axes[-1].set_xlabel(wrap(f"element index (colour: thread; number: the thread's loop iteration); blocks of "
                             f"{threads} threads", FIGURE_WIDTH_IN * FIGURE_DPI - 20, TEXT_PT))
    return fig


def reduction_tree_figure(values: list[float] | None = None):
    """The shared-memory tree of reduce_sum step 2 on 8 threads: at each level the lower half of
    the live threads adds the value ``half`` places up (partial[t] += partial[t + half]); log2(8)
    = 3 levels, a barrier between levels. The same shape is what __shfl_down_sync does in a warp."""
    rng = np.random.default_rng(3)
    vals = list(values) if values is not None else [float(v) for v in rng.integers(1, 10, 8)]
    levels = [vals]
    half = len(vals) // 2
    while half >= 1:
        prev = levels[-1]
        levels.append([prev[t] + prev[t + half] for t in range(half)])
        half //= 2
    fig, ax = new_chart(height=3.4)
    for depth, level in enumerate(levels):
        y = len(levels) - 1 - depth
        for t, v in enumerate(level):
            ax.add_patch(plt.Rectangle((t - 0.4, y - 0.3), 0.8, 0.6, color="tab:green" if depth else "tab:gray", alpha=0.6))
            ax.text(t, y, f"{v:g}", ha="center", va="center", fontsize=TEXT_PT)
        if depth:
            h = len(level)
            for t in range(h):  # thread t adds partial[t + half] into partial[t]
                ax.annotate("", xy=(t, y + 0.3), xytext=(t, y + 0.7), arrowprops=dict(arrowstyle="->", color="black"))
                ax.annotate("", xy=(t + 0.1, y + 0.3), xytext=(t + h, y + 0.7),
                            arrowprops=dict(arrowstyle="->", color="tab:red", alpha=0.7))
            ax.text(len(vals) - 0.45, y, wrap(f"half = {h}: threads 0..{h - 1} add, then __syncthreads()",
                                              0.45 * FIGURE_WIDTH_IN * FIGURE_DPI, SMALL_PT),
                    fontsize=SMALL_PT, ha="right", va="center")
    ax.set_xlim(-0.6, len(vals) - 0.4)
    ax.set_ylim(-0.5, len(levels) - 0.4)
    ax.set_yticks(range(len(levels)), [f"level {len(levels) - 1 - y}" for y in range(len(levels))])
    ax.set_xticks(range(len(vals)), [f"t{t}" for t in range(len(vals))])
    ax.set_title(wrap(f"{len(vals)} partial sums in {len(levels) - 1} levels: black = own value, red = the value half "
                      "places up", FIGURE_WIDTH_IN * FIGURE_DPI - 20, TITLE_PT), fontsize=TITLE_PT)
    return fig


def online_softmax_trace(x: np.ndarray) -> dict[str, np.ndarray]:
    """The running max m and sum s (of exp(x - m)) after each element, and where m grew (a rescale)."""
    m, s = -np.inf, 0.0
    ms, ss, rescaled = [], [], []
    for v in x.astype(np.float64):
        top = max(m, v)
        rescaled.append(top > m and np.isfinite(m))
        s = s * math.exp(m - top) + math.exp(v - top) if np.isfinite(m) else math.exp(v - top)
        m = top
        ms.append(m)
        ss.append(s)
    return {"m": np.array(ms), "s": np.array(ss), "rescaled": np.array(rescaled)}


def online_softmax_figure(x: np.ndarray | None = None):
    """A row read once: the running max (steps up), the running sum (drops at each rescale, when
    the sum so far is multiplied by exp(m_old - m_new)), and the two-pass sum it ends at."""
    x = np.random.default_rng(7).normal(size=24) * 2 if x is None else np.asarray(x, dtype=np.float64)
    t = online_softmax_trace(x)
    exact = np.exp(x - x.max()).sum()
    j = np.arange(len(x))
    fig, (a, b) = new_chart(2, 1, height=5.6, sharex=True)
    a.plot(j, x, "o", color="tab:gray", label="x[j]")
    a.step(j, t["m"], where="post", color="tab:red", label="running max m")
    legend_above(a)
    a.set_ylabel("value")
    b.plot(j, t["s"], "-o", color="tab:green", label="running sum s = sum exp(x - m)")
    b.plot(j[t["rescaled"]], t["s"][t["rescaled"]], "v", color="tab:red", markersize=9,
           label="max grew: s *= exp(m_old - m_new), then + exp(x - m_new)")
    b.axhline(exact, color="tab:blue", linestyle="--", label=f"two-pass sum against the final max: {exact:.4f}")
    legend_above(b)
    b.set_ylabel("sum")
    b.set_xlabel("element j, in the order one thread reads them")
    fig.suptitle(wrap("online softmax: one pass, and the sum always measured against the max seen so far",
                      FIGURE_WIDTH_IN * FIGURE_DPI - 20, TITLE_PT), fontsize=TITLE_PT)
    return fig


# ---- matmul: the tile hierarchy and what each step's tiles buy (a model, beside the steps' timings)

# (step, block tile BM x BN, bytes per element, roof): each block loads (BM + BN) elements per k from
# global memory (L2) for its 2 * BM * BN flops. The roof is the compute peak the step's instructions
# can reach (CUDA cores: the FP32 peak; tensor cores: the dense f16 one). The block tiles are those
# of ops/matmul/steps/ and the production kernels.
MATMUL_STEPS = [
    ("1 naive: a thread per output (CUDA 1)", 1, 1, 4, "fp32_gflops"),
    ("2 shared tiles 32 x 32 (CUDA 2, the lab)", 32, 32, 4, "fp32_gflops"),
    ("3 register tiles 128 x 128, 8 x 8 per thread (CUDA 3)", 128, 128, 4, "fp32_gflops"),
    ("4 tensor cores 128 x 128, f16 (TileLang 2)", 128, 128, 2, "tensor_f16_gflops"),
    ("5 + pipelined loads 128 x 256, f16 (production)", 128, 256, 2, "tensor_f16_gflops"),
]


def matmul_tile_intensity(bm: int, bn: int, element_bytes: int) -> float:
    """FLOP per byte a block loads from global memory: 2 * BM * BN flops per (BM + BN) elements per k."""
    return 2 * bm * bn / ((bm + bn) * element_bytes)


def matmul_steps_figure(device: str = "NVIDIA H200"):
    """Each step's global-memory intensity against the roofline of its instructions: the bound
    min(bandwidth x intensity, compute peak) a block tile of that size allows."""
    from .roofline import DATASHEET

    peaks = DATASHEET[device]
    names = [s[0] for s in MATMUL_STEPS]
    intensity = [matmul_tile_intensity(bm, bn, eb) for _, bm, bn, eb, _ in MATMUL_STEPS]
    bound = [min(peaks["bandwidth_gbps"] * i, peaks[roof]) / 1000 for i, (*_, roof) in zip(intensity, MATMUL_STEPS)]
    labels = [wrap(name, 0.42 * FIGURE_WIDTH_IN * FIGURE_DPI, TEXT_PT) for name in names]
    y, bars_in = _bar_rows(labels)
    fig, (left, right) = new_chart(2, 1, height=2 * (bars_in + 1.15) + 0.3)
    left.barh(y, intensity, height=BAR_IN, color="tab:green")
    for yy, i in zip(y, intensity):
        left.text(i, yy, f" {i:.3g}", va="center", fontsize=SMALL_PT, bbox=VALUE_BOX)
    for ridge, label, color in ((peaks["fp32_gflops"], "FP32", "tab:blue"), (peaks["tensor_f16_gflops"], "tensor f16", "tab:red")):
        left.axvline(ridge / peaks["bandwidth_gbps"], color=color, linestyle=":",
                     label=f"ridge, {label}: {ridge / peaks['bandwidth_gbps']:.0f} FLOP/B")
    left.set_xscale("log")
    left.set_xlim(min(intensity) / 2, max(intensity + [peaks["tensor_f16_gflops"] / peaks["bandwidth_gbps"]]) * 3)
    left.set_xlabel(wrap("FLOP per byte a block loads from global memory (model)", 0.55 * FIGURE_WIDTH_IN * FIGURE_DPI,
                         TEXT_PT))
    right.barh(y, bound, height=BAR_IN, color="tab:purple")
    for yy, b in zip(y, bound):
        right.text(b, yy, f" {b:.0f}", va="center", fontsize=SMALL_PT, bbox=VALUE_BOX)
    right.set_xscale("log")
    right.set_xlim(min(bound) / 2, max(bound) * 4)
    right.set_xlabel(wrap(f"bound on {device} (TFLOP/s): min(bandwidth x intensity, peak)",
                          0.55 * FIGURE_WIDTH_IN * FIGURE_DPI, TEXT_PT))
    for ax in (left, right):
        ax.set_yticks(y, labels, fontsize=TEXT_PT)
        ax.set_ylim(0, bars_in)
    legend_above(left, "the tile's arithmetic intensity")
    legend_above(right, "the roofline bound it allows")
    fig.suptitle(wrap("matmul: what each step's tiles allow (a model from the tile sizes, not a measurement)",
                      FIGURE_WIDTH_IN * FIGURE_DPI - 20, TITLE_PT), fontsize=TITLE_PT)
    return fig


def matmul_tiling_figure(block=(128, 128), warp=(64, 32), mma=(16, 8)):
    """The production tensor-core kernel's hierarchy: C in block tiles (one per thread block), a
    block tile in warp tiles (one per warp), a warp tile in mma tiles (one mma.sync m16n8k16 each)."""
    fig, axes = new_chart(1, 3, height=3.4)
    levels = [("C: 512 x 512 in block tiles", (512, 512), block, "one block: " + "x".join(map(str, block))),
              ("a block tile in warp tiles", block, warp, f"one warp: {warp[0]}x{warp[1]} (8 warps)"),
              ("a warp tile in mma tiles", warp, mma, f"one mma.sync: {mma[0]}x{mma[1]} outputs, K step 16")]
    colors = ("tab:blue", "tab:green", "tab:red")
    for ax, (title, (h, w), (th, tw), note), color in zip(axes, levels, colors):
        for r in range(0, h, th):
            for c in range(0, w, tw):
                ax.add_patch(plt.Rectangle((c, h - r - th), tw, th, fill=False, edgecolor="gray", linewidth=0.6))
        ax.add_patch(plt.Rectangle((0, h - th), tw, th, color=color, alpha=0.5))
        ax.set_xlim(0, w)
        ax.set_ylim(0, h)
        ax.set_aspect("equal")
        ax.set_xticks([0, w], ["0", f"{w}"])
        ax.set_yticks([0, h], [f"{h}", "0"])
        # a third of the column each, less the tick labels' room: title above, what is shaded below
        ax.set_title(wrap(title, FIGURE_WIDTH_IN * FIGURE_DPI / 3 - 30, TEXT_PT), fontsize=TEXT_PT)
        ax.set_xlabel(wrap(f"shaded: {note}", FIGURE_WIDTH_IN * FIGURE_DPI / 3 - 30, TEXT_PT))
    fig.suptitle(wrap("the tensor-core kernel's tiles: block -> warp -> mma (rows down, columns across)",
                      FIGURE_WIDTH_IN * FIGURE_DPI - 20, TITLE_PT), fontsize=TITLE_PT)
    return fig
