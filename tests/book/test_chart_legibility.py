"""The chapters' charts are legible at the width the site shows them (issue 28), without building
the site: every chart function a chapter calls is drawn from the committed data (data/bench/*.json,
data/bench/steps/*.json) and saved as the inline backend saves it (PNG, bbox_inches="tight").

At a 1280 px browser window the content column is charts.CONTENT_WIDTH_PX wide; an image wider
than that is scaled down by CONTENT_WIDTH_PX / its width. Every text the chart draws must then be
at least charts.MIN_TEXT_PX CSS px tall (its size in points x dpi / 72 x that scale), lie wholly
inside the figure (nothing clipped), and be whole (no label cut short with '...'). And the site's
stylesheet wraps long code lines and outputs instead of scrolling them sideways.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from PIL import Image  # noqa: E402

from operator_course.book import lesson_figures as lf  # noqa: E402
from operator_course.book import roofline, steps  # noqa: E402
from operator_course.book.chapter import load, results_files  # noqa: E402
from operator_course.book.charts import CONTENT_WIDTH_PX, FIGURE_DPI, MIN_TEXT_PX, text_width_px, wrap  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
yaml = pytest.importorskip("yaml")


def charts() -> list:
    """(id, function drawing the figure): each chart as a chapter draws it, from committed data."""
    found = []
    for op in steps.OPS:
        for doc in lf.step_results(op):
            found.append((f"steps-{op}-{doc['created'][:10]}", lambda doc=doc, op=op: lf.progression_figure(doc, op)))
        found.append((f"steps-{op}-unmeasured", lambda op=op: lf.progression_figure(None, op)))
    for path in results_files():
        doc = load(path)
        measured = {r["op"] for r in doc["rows"] if r["bytes"] >= 1 << 20}
        for op in [None, *[op for op in steps.OPS if op in measured]]:
            found.append((f"roofline-{path.stem}-{op or 'all'}", lambda doc=doc, op=op: roofline.roofline_figure(doc, op)))
    found += [
        ("thread-map", lf.thread_map_figure),  # copy's (steps 3 and 4)
        ("thread-map-vector_add", lambda: lf.thread_map_figure("vector_add")),
        ("reduction-tree", lf.reduction_tree_figure),
        ("online-softmax", lf.online_softmax_figure),
        ("tile-model", lf.matmul_steps_figure),
        ("tile-hierarchy", lf.matmul_tiling_figure),
    ]
    return found


CHARTS = charts()
# the chart functions the test draws: a chapter calling any other *_figure has a chart not checked here
COVERED = {"progression_figure", "roofline_figure", "thread_map_figure", "reduction_tree_figure",
           "online_softmax_figure", "matmul_steps_figure", "matmul_tiling_figure"}


def shown_width(fig) -> int:
    """The width in pixels of the PNG a chapter shows: the inline backend's savefig(bbox_inches="tight")."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return Image.open(buf).size[0]


def drawn_texts(fig) -> list[tuple[Text, object]]:
    """Every non-empty text the figure draws (titles, tick labels, legends, annotations) with its
    extent in the figure's pixels: recorded as it is drawn, so only ticks on show count."""
    seen = []
    draw = Text.draw

    def recording(self, renderer):
        draw(self, renderer)
        if self.get_visible() and self.get_text().strip():
            seen.append((self, self.get_window_extent(renderer)))

    Text.draw = recording
    try:
        fig.canvas.draw()
    finally:
        Text.draw = draw
    return seen


@pytest.fixture(scope="module", params=CHARTS, ids=[name for name, _ in CHARTS])
def chart(request):
    fig = request.param[1]()
    yield fig, shown_width(fig), drawn_texts(fig)
    plt.close(fig)


def test_the_data_gives_step_charts_to_check():
    assert any(name.startswith("steps-") and not name.endswith("unmeasured") for name, _ in CHARTS), \
        "no committed step benchmark (data/bench/steps/*.json): the measured step charts go unchecked"
    assert any(name.startswith("roofline-") for name, _ in CHARTS), "no committed data/bench/*.json"


def test_chart_is_shown_at_its_own_size(chart):
    fig, width, _ = chart
    assert fig.dpi == FIGURE_DPI
    assert width <= CONTENT_WIDTH_PX, (f"the chart is {width} px wide: the {CONTENT_WIDTH_PX} px column shrinks it "
                                       f"and its text by {CONTENT_WIDTH_PX / width:.2f}")


def test_every_text_is_at_least_the_minimum_size(chart):
    fig, width, texts = chart
    scale = min(1.0, CONTENT_WIDTH_PX / width)  # how much the browser shrinks the image
    small = sorted({(round(t.get_fontsize() * fig.dpi / 72 * scale, 1), t.get_text()[:40]) for t, _ in texts
                    if t.get_fontsize() * fig.dpi / 72 * scale < MIN_TEXT_PX})
    assert texts and not small, f"text under {MIN_TEXT_PX} px at the site's width (px, text): {small[:5]}"


def test_no_text_is_clipped(chart):
    fig, _, texts = chart
    box = fig.bbox
    outside = [(t.get_text()[:40], [round(v) for v in e.extents]) for t, e in texts
               if e.x0 < box.x0 - 0.5 or e.y0 < box.y0 - 0.5 or e.x1 > box.x1 + 0.5 or e.y1 > box.y1 + 0.5]
    assert not outside, f"text reaching outside the {box.width:.0f} x {box.height:.0f} px figure: {outside}"


def test_no_label_is_cut_short(chart):
    _, _, texts = chart
    cut = [t.get_text() for t, _ in texts if re.search(r"(\.\.\.|\u2026)\s*$", t.get_text())]
    assert not cut, f"labels cut short: {cut}"


def test_tick_labels_do_not_overlap(chart):
    """Wrapped step names each fit their own bar's row."""
    fig, _, texts = chart
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            mine = [e for t, e in texts if t in axis.get_ticklabels(which="both")]
            clashes = [(a.extents, b.extents) for i, a in enumerate(mine) for b in mine[i + 1:]
                       if a.overlaps(b) and min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1]
            assert not clashes, f"tick labels drawn over each other: {clashes[:2]}"


def test_the_chapters_draw_only_checked_charts():
    """Every chart function of lesson_figures and roofline that a chapter calls is drawn above."""
    pages = list((ROOT / "book").glob("*.md")) + list((ROOT / "book" / "ops").glob("*.md"))
    called = {name for page in pages for name in re.findall(r"\b(\w+_figure)\(", page.read_text())
              if hasattr(lf, name) or hasattr(roofline, name)}
    assert called and called <= COVERED, f"chart functions the chapters call that this test does not draw: {called - COVERED}"


def test_wrap_keeps_every_word_within_the_width():
    label = max((s.label for s in steps.all_steps()), key=len)
    wrapped = wrap(label, 200)
    assert wrapped.split() == label.split() and "\n" in wrapped
    assert all(text_width_px(line) <= 200 for line in wrapped.splitlines())


def test_the_site_stylesheet_wraps_code_and_outputs():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    assert "book/_static" in config["html_static_path"]
    (css_name,) = [name for name in config["html_css_files"] if (ROOT / "book" / "_static" / name).is_file()]
    css = re.sub(r"/\*.*?\*/", "", (ROOT / "book" / "_static" / css_name).read_text(), flags=re.S)
    rules = {selector.strip(): body for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", css)
             for selector in selectors.split(",")}
    for selector in ("div.highlight pre", "div.cell_output pre"):  # code blocks and cells; cells' text outputs
        body = re.sub(r"\s+", " ", rules.get(selector, ""))
        assert "white-space: pre-wrap" in body and "overflow-wrap: anywhere" in body, f"{selector} does not wrap"
