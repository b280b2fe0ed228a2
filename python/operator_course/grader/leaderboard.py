"""The class leaderboard (class_view.py builds it): per lab, every student's kernel from the trusted
timing harness as a percentage of what the device can do (the copy ceiling for a memory-bound op,
the tensor-core peak for matmul), each measured in the same run as the kernel; the geometric mean
over the harness's shapes ranks. Beside it torch (timed call by call with the kernel) and the
course's reference kernel (OUT/reference/), and a roofline chart with every student's points.

The public board (OUT/leaderboard/) names students by pseudonym and leaves out every flagged entry;
the instructor's (a section of the dashboard) names them and marks the flags."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from .class_data import ClassData, Flag, atomic_write, esc, page

CEILING_WORDS = {"GB/s": "the copy ceiling", "TFLOP/s": "the tensor-core peak"}


@dataclass
class Entry:
    student: str
    name: str  # pseudonym
    lab: str
    check: str
    op: str
    unit: str
    ceiling: float
    shapes: list[dict]  # {"shape", "rate", "torch_rate", "ratio"}
    ratio: float  # the harness's: torch's time over ours, geometric mean
    status: str
    flags: list[Flag]

    @property
    def percents(self) -> list[float]:
        return [100 * s["rate"] / self.ceiling for s in self.shapes]

    @property
    def score(self) -> float:
        """% of the ceiling, the geometric mean over the shapes."""
        return _geomean(self.percents)

    @property
    def torch_score(self) -> float:
        return _geomean([100 * s["torch_rate"] / self.ceiling for s in self.shapes])


def _geomean(values: list[float]) -> float:
    values = [v for v in values if v > 0]
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else 0.0


def entries(data: ClassData) -> dict[str, list[Entry]]:
    """lab -> its entries with a timing (flagged ones too), best first."""
    board: dict[str, list[Entry]] = {}
    for t in data.timings.values():
        if not t.get("shapes") or not t.get("ceiling"):
            continue
        board.setdefault(t["lab"], []).append(Entry(
            t["student"], data.names.get(t["student"], "?"), t["lab"], t["check"], t["op"], t["unit"],
            float(t["ceiling"]), t["shapes"], float(t["ratio"]), t.get("status", ""),
            data.flagged(t["student"], t["lab"])))
    for lab in board:
        board[lab].sort(key=lambda e: (-e.score, e.name))
    return board


def unranked_flags(data: ClassData, board: dict[str, list[Entry]]) -> dict[str, list[dict]]:
    """lab -> timings the harness refused (no shapes: impossible, wrong while timed): the instructor's."""
    out: dict[str, list[dict]] = {}
    for t in data.timings.values():
        if not t.get("shapes") and t.get("flag"):
            out.setdefault(t["lab"], []).append(t)
    return out


def reference_entry(data: ClassData, lab: str) -> Entry | None:
    t = data.reference.get(lab)
    if not t or not t.get("ceiling"):
        return None
    return Entry("reference", "reference", lab, t["check"], t["op"], t["unit"], float(t["ceiling"]), t["shapes"],
                 float(t["ratio"]), t.get("status", ""), [])


# --- the chart ----------------------------------------------------------------------------------

def _bytes_and_flops(op: str, shape: list[int]) -> tuple[int, int] | None:
    """Bytes the harness counts (each float32 input read once, the output written once) and the
    FLOPs of one call, from the operator's record; None where the record cannot say."""
    try:
        from operator_runtime_testing.operators import get

        record = get(op)
        shape = tuple(shape)
        numel = [math.prod(s) for s in record.input_shapes(shape)] + [math.prod(record.output_shape(shape))]
        flops = record.flops(shape) if record.flops else record.flops_per_element * numel[0]
        return 4 * sum(numel), int(flops)
    except Exception:  # noqa: BLE001 - an op the records do not know: the chart goes by shape index
        return None


def roofline(path: Path, lab: str, shown: list[Entry], reference: Entry | None, bandwidth: float | None,
             label_of, instructor: bool = False) -> Path:
    """The lab's roofline, every entry's point per shape. A memory-bound op (timed in GB/s): achieved
    bandwidth against bytes moved, under the roof of the copy ceiling. Matmul (TFLOP/s): attained
    TFLOP/s against arithmetic intensity, under min(bandwidth x intensity, the tensor-core peak).
    Where the operator's record cannot say the bytes or FLOPs, the shapes stand side by side."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    entries = shown + ([reference] if reference else [])
    unit = entries[0].unit
    compute = unit == "TFLOP/s"
    sizes = {(id(e), i): _bytes_and_flops(e.op, s["shape"]) for e in entries for i, s in enumerate(e.shapes)}
    known = all(v is not None for v in sizes.values())

    def xs_of(e: Entry) -> list[float]:
        if not known:
            return [float(i + 1) for i in range(len(e.shapes))]
        return [(b_f[1] / b_f[0] if compute else b_f[0]) for b_f in (sizes[(id(e), i)] for i in range(len(e.shapes)))]

    fig, ax = plt.subplots(figsize=(6.6, 4.4 + 0.16 * ((len(shown) + 4) // 3 if len(shown) <= 14 else 0)), dpi=100,
                           layout="constrained")
    colours = plt.get_cmap("tab20")
    for n, e in enumerate(shown):
        flagged = instructor and bool(e.flags)
        ax.plot(xs_of(e), [s["rate"] for s in e.shapes], marker="X" if flagged else "o", markersize=8 if flagged else 6,
                linestyle="-", linewidth=0.8, color="red" if flagged else colours(n % 20),
                label=label_of(e) + (" (flagged)" if flagged else ""))
    torch_x = [x for e in shown for x in xs_of(e)]
    if torch_x:
        ax.plot(torch_x, [s["torch_rate"] for e in shown for s in e.shapes], "kx", markersize=7, label="torch (same runs)")
    if reference:
        ax.plot(xs_of(reference), [s["rate"] for s in reference.shapes], marker="*", color="goldenrod", markersize=13,
                linestyle="none", label="course reference")
    ceiling = statistics.median(e.ceiling for e in entries)
    xs_all = [x for line in ax.get_lines() for x in line.get_xdata()] or [1.0]
    lo, hi = (min(xs_all) / 2, max(xs_all) * 2) if known else (0.5, max(xs_all) + 0.5)
    if compute and known and bandwidth:  # the ridge point in view: where the slanted roof meets the flat one
        lo = min(lo, ceiling * 1000 / bandwidth / 8)
    if compute and known:
        roof_x = [lo * (hi / lo) ** (k / 60) for k in range(61)]
        roof_y = [min(ceiling, bandwidth * x / 1000) if bandwidth else ceiling for x in roof_x]
        ax.plot(roof_x, roof_y, "b--", linewidth=1.2,
                label=f"roof: {ceiling:.0f} TFLOP/s tensor-core peak" + (f", {bandwidth:.0f} GB/s" if bandwidth else ""))
    else:
        words = f"tensor-core peak {ceiling:.0f} TFLOP/s" if compute else f"copy ceiling {ceiling:.0f} GB/s"
        ax.axhline(ceiling, color="b", linestyle="--", linewidth=1.2, label=f"roof: {words}")
    ax.set_ylabel("attained TFLOP/s" if compute else "achieved GB/s")
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:g}"[0] in "2468" else ""))
    ax.set_xlim(lo, hi)
    if known:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(plain if compute else FuncFormatter(lambda v, _: f"{v / 1e6:g} MB"))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.set_xlabel("arithmetic intensity (FLOP per byte)" if compute else
                      "bytes moved per call (each input read once, the output written once)")
    else:
        ticks = range(1, int(max(xs_all)) + 1)
        ax.set_xticks(list(ticks), [f"shape {i}" for i in ticks])
        ax.set_xlabel("the harness's shapes")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(f"{lab}: every kernel's shapes under the roof ({CEILING_WORDS.get(unit, 'the ceiling')})", fontsize=10)
    if len(shown) <= 14:  # below the axes, never over a point
        fig.legend(fontsize=7, loc="outside lower center", ncol=3)
    fig.savefig(path)
    plt.close(fig)
    return path


def _bandwidth(data: ClassData) -> float | None:
    """A copy ceiling measured by the harness in these grades (for matmul's slanted roof)."""
    values = [t["ceiling"] for t in data.timings.values() if t.get("unit") == "GB/s" and t.get("ceiling")]
    return statistics.median(values) if values else None


# --- the tables ---------------------------------------------------------------------------------

def _shape_text(shape: list[int]) -> str:
    return "x".join(map(str, shape))


def table(lab: str, shown: list[Entry], reference: Entry | None, instructor: bool) -> str:
    n_shapes = max(len(e.shapes) for e in shown + ([reference] if reference else []))
    unit = (shown or [reference])[0].unit
    words = CEILING_WORDS.get(unit, "the ceiling")
    head = ["rank", "student" if instructor else "name", f"% of {words} (geometric mean)"]
    head += [f"shape {i + 1}: % of {words}" for i in range(n_shapes)]
    head += ["vs torch (its time / yours)", "vs the reference kernel"]
    if instructor:
        head += ["pseudonym", "check", "flags"]
    lines = ["<table class=\"board\" data-lab=\"" + esc(lab) + "\">",
             "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"]

    def shape_cells(e: Entry) -> str:
        cells = []
        for i in range(n_shapes):
            if i < len(e.shapes):
                s = e.shapes[i]
                cells.append(f'<td class="num" title="{esc(_shape_text(s["shape"]))}: {s["rate"]:g} {esc(e.unit)}">'
                             f"{100 * s['rate'] / e.ceiling:.1f}%<br><span class=\"note\">{esc(_shape_text(s['shape']))}"
                             f"</span></td>")
            else:
                cells.append("<td></td>")
        return "".join(cells)

    if shown:  # torch, timed call by call with each kernel: the median of its scores
        torch = statistics.median(e.torch_score for e in shown)
        ref_vs = f"{torch / reference.score:.2f}x" if reference and reference.score else ""
        lines.append(f'<tr class="baseline" data-name="torch"><td></td><td>torch</td><td class="num">{torch:.1f}%</td>'
                     + "".join("<td></td>" for _ in range(n_shapes)) + f'<td class="num">1.00x</td><td class="num">'
                     f"{ref_vs}</td>" + ("<td></td><td></td><td></td>" if instructor else "") + "</tr>")
    if reference:
        lines.append(f'<tr class="baseline" data-name="reference"><td></td><td>course reference kernel</td>'
                     f'<td class="num">{reference.score:.1f}%</td>{shape_cells(reference)}'
                     f'<td class="num">{reference.ratio:.2f}x</td><td class="num">1.00x</td>'
                     + ("<td></td><td>" + esc(reference.check) + "</td><td></td>" if instructor else "") + "</tr>")
    for rank, e in enumerate(shown, 1):
        flagged = instructor and bool(e.flags)
        who = e.student if instructor else e.name
        vs_ref = f"{e.score / reference.score:.2f}x" if reference and reference.score else "n/a"
        row = (f'<tr class="entry{" flagged" if flagged else ""}" id="p-{esc(e.name)}" data-name="{esc(who)}">'
               f'<td class="num">{rank}</td><td>{esc(who)}</td><td class="num"><b>{e.score:.1f}%</b></td>'
               f'{shape_cells(e)}<td class="num">{e.ratio:.2f}x</td><td class="num">{vs_ref}</td>')
        if instructor:
            flags = "<br>".join(f'<span class="flag">{esc(f.what)}</span>: {esc(f.detail)}' for f in e.flags)
            row += f"<td>{esc(e.name)}</td><td>{esc(e.check)} ({esc(e.status)})</td><td>{flags}</td>"
        lines.append(row + "</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def section(data: ClassData, folder: Path, instructor: bool) -> str:
    """Every lab's board and chart (the charts written into ``folder``), as HTML."""
    board = entries(data)
    refused = unranked_flags(data, board) if instructor else {}
    labs = [lab for lab in data.labs if lab in board or lab in data.reference or lab in refused]
    labs += sorted(set(board) - set(labs))
    if not labs:
        return "<p>No performance check has been timed yet (they are timed on a GPU grading pass).</p>"
    bandwidth = _bandwidth(data)
    parts = []
    for lab in labs:
        everyone = board.get(lab, [])
        shown = everyone if instructor else [e for e in everyone if not e.flags]
        reference = reference_entry(data, lab)
        parts.append(f'<section class="lab" id="lab-{esc(lab)}"><h2>{esc(lab)}</h2>')
        if shown or reference:
            unit = (shown or [reference])[0].unit
            parts.append(f"<p>Each kernel timed by the grader's harness (fresh inputs every call, every call's "
                         f"result checked, L2 flushed), as a percentage of {CEILING_WORDS.get(unit, 'the ceiling')} "
                         f"measured in the same run; ranked by the geometric mean over the harness's shapes. "
                         f"'vs torch': torch's time over the kernel's, timed call by call with it.</p>")
            parts.append(table(lab, shown, reference, instructor))
            png = folder / f"{lab}-roofline.png"
            roofline(png, lab, shown, reference, bandwidth,
                     (lambda e: e.student) if instructor else (lambda e: e.name), instructor)
            parts.append(f'<p><img src="{esc(png.name)}" alt="roofline of {esc(lab)}: every kernel\'s points"></p>')
        else:
            parts.append("<p>No entry to show yet.</p>")
        for t in refused.get(lab, []):
            parts.append(f'<p class="flag">{esc(t["student"])} ({esc(data.names.get(t["student"], "?"))}): '
                         f'{esc(t["flag"])}: {esc(t.get("error", ""))}</p>')
        parts.append("</section>")
    return "\n".join(parts)


def write(data: ClassData) -> Path:
    """OUT/leaderboard/index.html and its charts: the public board."""
    folder = data.out / "leaderboard"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*-roofline.png"):
        old.unlink()
    graded = data.manifest.get("graded_at", "")
    body = (f'<p class="note">Rebuilt after each grading run{" (last: " + esc(graded) + ")" if graded else ""}. '
            "Every student appears under a pseudonym; your own is in your feedback (~/feedback/grades.md). "
            "Entries under the instructor's review are not shown.</p>\n" + section(data, folder, instructor=False))
    path = folder / "index.html"
    atomic_write(path, page("Class leaderboard", body))
    return path
