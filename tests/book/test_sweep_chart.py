"""The sweep's charts (operator_course.book.sweep_chart) from a small synthetic sweep JSON: one per op,
ratio against size on log axes, both backends, a marker per dtype, lines at 1.0 and 0.95, wrong rows
left out; legible: as wide as the site's column shows unscaled (chapter.py), no text under 11 pt,
none outside the figure."""

from __future__ import annotations

import io
import json
import random

import matplotlib
import pytest
from matplotlib.text import Text
from PIL import Image

from operator_course.book import sweep_chart
from operator_course.book.charts import CONTENT_WIDTH_PX, FIGURE_DPI, FIGURE_WIDTH_IN

matplotlib.use("Agg")

MEASURE = {"softmax": "row length", "vector_add": "elements", "matmul": "M*N*K"}


def synthetic(wrong: int = 1) -> dict:
    rng = random.Random(0)
    rows = []
    for op, measure in MEASURE.items():
        for backend in ("nvidia", "tilelang"):
            for i in range(12):
                ratio = 2 ** rng.uniform(-1.5, 1.5)
                rows.append({"op": op, "backend": backend, "dtype": ("f32", "f16", "bf16")[i % 3],
                             "size": int(2 ** rng.uniform(0, 30)), "size_measure": measure, "speedup": ratio,
                             "ratio": ratio, "correct": not (op == "softmax" and backend == "nvidia" and i < wrong)})
    return {"device": {"name": "NVIDIA H100 80GB HBM3"}, "sweep": {"seed": 2147483647}, "copy_ceiling_gbps": 4000.0,
            "rows": rows}


@pytest.fixture
def figure():
    import matplotlib.pyplot as plt

    fig = sweep_chart.sweep_figure(synthetic(wrong=2), "softmax")
    yield fig
    plt.close(fig)


def test_the_chart_is_ratio_against_size_on_log_axes(figure):
    (ax,) = figure.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "row length" in ax.get_xlabel() and "torch" in ax.get_ylabel()
    assert sorted(round(line.get_ydata()[0], 2) for line in ax.get_lines()) == [0.95, 1.0]
    points = sum(len(c.get_offsets()) for c in ax.collections)
    assert points == 24 - 2, "every correct row of both backends, and no wrong one"
    assert "2 wrong, not drawn" in " ".join(ax.get_title().split())  # wrapped to the width
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"nvidia", "tilelang", "f32", "f16", "bf16"} <= set(labels)


def test_the_chart_is_legible(figure):
    assert tuple(figure.get_size_inches())[0] == FIGURE_WIDTH_IN and figure.dpi == FIGURE_DPI
    buf = io.BytesIO()
    figure.savefig(buf, format="png", bbox_inches="tight")  # as a chapter shows it
    assert Image.open(buf).size[0] <= CONTENT_WIDTH_PX, "the site's column would shrink it"
    drawn = []
    draw = Text.draw

    def recording(self, renderer):
        draw(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn.append((self, self.get_window_extent(renderer)))
    Text.draw = recording
    try:
        figure.canvas.draw()
    finally:
        Text.draw = draw
    small = sorted({(t.get_text(), t.get_fontsize()) for t, _ in drawn if t.get_fontsize() < 11})
    assert drawn and not small, small
    box = figure.bbox
    outside = [t.get_text() for t, e in drawn if e.x0 < box.x0 - 0.5 or e.y0 < box.y0 - 0.5
               or e.x1 > box.x1 + 0.5 or e.y1 > box.y1 + 0.5]
    assert not outside, outside
    ticks = [e for t, e in drawn if t in figure.axes[0].yaxis.get_ticklabels()]
    assert not any(a.overlaps(b) for i, a in enumerate(ticks) for b in ticks[i + 1:]), "y tick labels overlap"


def test_one_chart_per_op(tmp_path):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(synthetic()))
    assert sweep_chart.main([str(path), "-o", str(tmp_path / "charts")]) == 0
    svgs = sorted((tmp_path / "charts").iterdir())
    assert [p.name for p in svgs] == sorted(f"sweep-{op}.svg" for op in MEASURE)
    assert all(p.read_text().startswith("<?xml") for p in svgs)
    assert sweep_chart.main([str(path), "-o", str(tmp_path / "mm.png"), "--op", "matmul"]) == 0
    assert (tmp_path / "mm.png").stat().st_size > 10_000


def test_the_command_refuses_what_it_cannot_draw(tmp_path, capsys):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(synthetic()))
    for argv in (["--op", "no_such_op", "-o", str(tmp_path / "x.svg")], ["-o", str(tmp_path / "all.svg")]):
        with pytest.raises(SystemExit) as exit:
            sweep_chart.main([str(path), *argv])
        assert exit.value.code == 2
    assert "no sweep rows for no_such_op" in capsys.readouterr().err
