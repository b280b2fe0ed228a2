"""The chapters' lesson figures (operator_course.book.lesson_figures) without building the
site: the step chart with and without measured figures, the step table, and the diagrams."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from operator_course.book import lesson_figures as lf  # noqa: E402
from operator_course.book import steps  # noqa: E402
from operator_course.book.charts import heading  # noqa: E402


def fake_doc(op: str, dtypes=("f32",)) -> dict:
    """A step_bench.py-shaped document with made-up figures: test input only, never committed."""
    rows = []
    for dtype in dtypes:
        for i, s in enumerate(steps.steps(op)):
            ms = 1.0 / (i + 1)
            flops = 2 * 1024 ** 3 if op == "matmul" else 0
            rows.append({"op": op, "backend": s.lang, "shape": [1024, 1024, 1024] if op == "matmul" else [1024, 1024],
                         "dtype": dtype, "attrs": {"step": s.name, "number": s.number, "title": s.title},
                         "latency_ms": ms, "bytes": 8 << 20, "gbps": (8 << 20) / ms / 1e6, "torch_ms": 0.5,
                         "torch_gbps": (8 << 20) / 0.5 / 1e6, "flops": flops, "gflops": flops / ms / 1e6,
                         "torch_gflops": flops / 0.5 / 1e6, "peak_fraction": None,
                         "notes": ["result differs from torch"] if i == 0 else []})
    return {"created": "2026-01-01T00:00:00", "device": {"name": "test"}, "copy_ceiling_gbps": 40.0, "rows": rows}


@pytest.mark.parametrize("op", steps.OPS)
def test_step_table_lists_every_step_and_says_what_is_missing(op):
    empty = lf.step_table(None, op)
    assert empty.count("not measured yet") == len(steps.steps(op))
    table = lf.step_table(fake_doc(op), op)
    assert "not measured yet" not in table and "wrong!" in table and "torch" in table
    assert table.count("\n") == len(steps.steps(op)) + 2  # header, rule, steps, torch


@pytest.mark.parametrize("op", ["copy", "softmax", "matmul"])
def test_progression_figure_draws_a_bar_per_measured_step(op):
    fig = lf.progression_figure(fake_doc(op), op)
    assert len(fig.axes[0].patches) == len(steps.steps(op))
    assert not lf.progression_figure(None, op).axes[0].patches  # no figures, no bars


def test_matmul_chart_has_a_panel_per_dtype_in_tflops():
    doc = fake_doc("matmul", ("f16", "f32"))
    doc["rows"] = [r for r in doc["rows"] if not (r["backend"] == "tilelang" and r["dtype"] == "f32")]
    fig = lf.progression_figure(doc, "matmul")
    panels = [ax for ax in fig.axes if heading(ax)]
    assert [heading(ax).split()[2] for ax in panels] == ["f16", "f32"]
    assert "TFLOP/s" in panels[0].get_xlabel()
    cuda = len([s for s in steps.steps("matmul") if s.lang == "cuda"])
    assert len(panels[0].patches) == len(steps.steps("matmul")) and len(panels[1].patches) == cuda
    shown = [t.get_text() for t in panels[1].texts]
    assert "not timed in this dtype" in shown and "not measured yet" not in shown
    table = lf.step_table(doc, "matmul")
    assert "f16 us (TFLOP/s)" in table and "f32 us (TFLOP/s)" in table
    assert f"({2 * 1024 ** 3 / 1.0 / 1e9:.1f})" in table  # the first step: 1 ms -> 2.1 TFLOP/s


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
    assert lf.step_results("matmul") == []  # a run without matmul rows is not matmul's chart
    monkeypatch.setenv("CAMP_BENCH_DIR", str(tmp_path / "nothing"))
    assert "not measured on the H200 yet" in lf.step_figures("copy", 2)


def test_step_bench_matmul_rows_are_what_the_chapter_reads(tmp_path, monkeypatch):
    """matmul rows as step_bench.py makes them (torch.matmul as the 'kernel', on the CPU): flops and
    dtype set, a wrong product marked; the chapter's chart, table and lines read them in TFLOP/s."""
    import importlib.util

    import torch

    from operator_runtime_testing.performance import write_results

    spec = importlib.util.spec_from_file_location("step_bench", lf.step_files.ROOT / "scripts" / "step_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    shape = (96, 80, 112)
    rows = []
    for dtype in (torch.float32, torch.float16):
        a, b = torch.randn(96, 112).to(dtype), torch.randn(112, 80).to(dtype)
        out = torch.empty(96, 80, dtype=dtype)
        expected = torch.matmul(a, b)
        for s in steps.steps("matmul"):
            if dtype in bench.dtypes("matmul", s.lang):
                rows.append(bench.measure(s, lambda: torch.matmul(a, b, out=out), [a, b], out, 0.01, expected, 100.0,
                                          device="cpu", shape=shape))
        wrong = bench.measure(steps.steps("matmul")[0], lambda: torch.matmul(a, b[:, :1].expand(-1, 80), out=out),
                              [a, b], out, 0.01, expected, 100.0, device="cpu", shape=shape)
        assert wrong.notes, "a product with the wrong columns is marked"
    assert all(not r.notes and r.flops == 2 * 96 * 80 * 112 and r.shape == list(shape) for r in rows)
    assert {r.dtype for r in rows} == {"f32", "f16"}
    assert not [r for r in rows if r.backend == "tilelang" and r.dtype == "f32"]  # T.gemm would be tf32
    (tmp_path / "steps").mkdir()
    write_results(tmp_path / "steps" / "h200-matmul.json", rows, "cpu", ["test"], 100.0)
    monkeypatch.setenv("CAMP_BENCH_DIR", str(tmp_path))
    assert lf.step_results("copy") == [] and len(lf.step_results("matmul")) == 1
    (doc,) = lf.step_results("matmul")
    assert "not measured yet" not in lf.step_table(doc, "matmul")
    assert len(lf.progression_figure(doc, "matmul").axes[0].patches) == len(steps.steps("matmul"))
    assert "TFLOP/s" in lf.step_figures("matmul", 3) and "f32" in lf.step_figures("matmul", 3)
