"""The committed shape sweeps (data/bench/sweep/) the chapters chart: whole, checked, and summarised
as drawn (the list under each chart names exactly the points under the floor line)."""

from __future__ import annotations

import statistics

import pytest

from operator_course.book.chapter import load, sweep_files
from operator_course.book.sweep_chart import FLOOR, below_floor, sweep_figure, sweep_ops

FILES = sweep_files()


def test_there_is_a_sweep_for_the_chapters():
    assert FILES, "data/bench/sweep/ holds no sweep: the chapters' 'Beyond the benchmark's shapes' draw nothing"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_row_was_checked_and_ranked(path):
    doc = load(path)
    assert doc["sweep"]["seed"] is not None and doc["device"]["type"] == "cuda"
    for row in doc["rows"]:
        assert row["correct"] is True and row["error"] is None, (row["case"], row["backend"], row["error"])
        assert row["ratio"] > 0 and row["torch_ms"] > 0 and row["latency_ms"] > 0, row["case"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_list_under_the_chart_names_the_points_under_the_floor(path):
    import matplotlib.pyplot as plt

    doc = load(path)
    for op in sweep_ops(doc):
        fig = sweep_figure(doc, op)
        drawn = [y for c in fig.axes[0].collections for _, y in c.get_offsets()]
        plt.close(fig)
        text, listed_in_all = below_floor(doc, op), 0
        for backend in dict.fromkeys(r["backend"] for r in doc["rows"] if r["op"] == op):
            rows = [r for r in doc["rows"] if r["op"] == op and r["backend"] == backend]
            line = next(ln for ln in text.splitlines() if ln.startswith(f"- **{backend}**"))
            assert f"median {statistics.median(r['ratio'] for r in rows):.2f}x over {len(rows)} shapes" in line, line
            tail = line.split(f"below {FLOOR}x: ", 1)
            listed = [item.rsplit(" ", 1)[0] for item in tail[1].split(", ")] if len(tail) == 2 else []
            below = [f"{r['category']} {r['label']} {r['dtype']}" for r in rows if r["ratio"] < FLOOR]
            assert sorted(listed) == sorted(below), (op, backend, line)
            listed_in_all += len(listed)
        assert len(drawn) == len([r for r in doc["rows"] if r["op"] == op]), f"{op}: a checked row is not drawn"
        assert sum(y < FLOOR for y in drawn) == listed_in_all, f"{op}: the chart and the list disagree"
