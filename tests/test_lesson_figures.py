"""The chapters' lesson figures (operator_runtime_testing.lesson_figures) without building the
site: the step chart with and without measured figures, the step table, and the diagrams."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from operator_runtime_testing import lesson_figures as lf  # noqa: E402
from operator_runtime_testing import steps  # noqa: E402


def fake_doc(op: str) -> dict:
    """A step_bench.py-shaped document with made-up figures: test input only, never committed."""
    rows = []
    for i, s in enumerate(steps.steps(op)):
        ms = 1.0 / (i + 1)
        rows.append({"op": op, "backend": s.lang, "shape": [1024, 1024], "dtype": "f32",
                     "attrs": {"step": s.name, "number": s.number, "title": s.title}, "latency_ms": ms,
                     "bytes": 8 << 20, "gbps": (8 << 20) / ms / 1e6, "torch_ms": 0.5,
                     "torch_gbps": (8 << 20) / 0.5 / 1e6, "notes": ["result differs from torch"] if i == 0 else []})
    return {"created": "2026-01-01T00:00:00", "device": {"name": "test"}, "copy_ceiling_gbps": 40.0, "rows": rows}


@pytest.mark.parametrize("op", steps.OPS)
def test_step_table_lists_every_step_and_says_what_is_missing(op):
    empty = lf.step_table(None, op)
    assert empty.count("not measured yet") == len(steps.steps(op))
    table = lf.step_table(fake_doc(op), op)
    assert "not measured yet" not in table and "wrong!" in table and "torch" in table
    assert table.count("\n") == len(steps.steps(op)) + 2  # header, rule, steps, torch


@pytest.mark.parametrize("op", ["copy", "softmax"])
def test_progression_figure_draws_a_bar_per_measured_step(op):
    fig = lf.progression_figure(fake_doc(op), op)
    assert len(fig.axes[0].patches) == len(steps.steps(op))
    assert not lf.progression_figure(None, op).axes[0].patches  # no figures, no bars


def test_diagrams_draw():
    assert len(lf.thread_map_figure("copy", n=40).axes) == 3
    assert len(lf.reduction_tree_figure([1, 2, 3, 4, 5, 6, 7, 8]).axes[0].patches) == 8 + 4 + 2 + 1
    assert len(lf.online_softmax_figure().axes) == 2


def test_online_trace_ends_at_the_two_pass_sum():
    x = np.random.default_rng(0).normal(size=100) * 5
    t = lf.online_softmax_trace(x)
    assert math.isclose(t["s"][-1], np.exp(x - x.max()).sum(), rel_tol=1e-12)
    assert t["m"][-1] == x.max() and t["rescaled"].any()


def test_step_bench_rows_are_what_the_chapters_read(tmp_path, monkeypatch):
    """scripts/step_bench.py's rows (measure + write_results), made here on the CPU with torch as
    the 'kernel', read back by the chapters' table and chart: the GPU run's JSON fits them."""
    import importlib.util

    import torch

    from operator_runtime_testing.performance import write_results

    spec = importlib.util.spec_from_file_location("step_bench", lf.step_files.ROOT / "scripts" / "step_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    x = torch.randn(1 << 12)
    out = torch.empty_like(x)
    rows = [bench.measure(s, lambda: out.copy_(x), [x], out, 0.01, x.clone(), 100.0, device="cpu")
            for s in steps.steps("copy")]
    rows.append(bench.measure(steps.steps("copy")[0], lambda: out.zero_(), [x], out, 0.01, x.clone(), 100.0,
                              device="cpu"))  # a wrong kernel is marked, not charted as fine
    assert rows[-1].notes and not rows[0].notes
    (tmp_path / "steps").mkdir()
    write_results(tmp_path / "steps" / "h200.json", rows[:-1], "cpu", ["test"], 100.0)
    monkeypatch.setenv("CAMP_BENCH_DIR", str(tmp_path))
    (doc,) = lf.step_results()
    assert "not measured yet" not in lf.step_table(doc, "copy")
    assert len(lf.progression_figure(doc, "copy").axes[0].patches) == len(steps.steps("copy"))
    line = lf.step_figures("copy", 2)
    assert "CUDA 2" in line and "TileLang 2" in line and "GB/s" in line and "% of the copy ceiling" in line
    assert "production" in lf.step_figures("copy", None)
    monkeypatch.setenv("CAMP_BENCH_DIR", str(tmp_path / "nothing"))
    assert "not measured on the H200 yet" in lf.step_figures("copy", 2)
