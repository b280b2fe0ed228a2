"""Chart geometry for the course site: every chart is drawn for the width the site shows it at
(issue 28), with the helpers that lay text out to fit it. Imports nothing of the course, so
chapter.py, roofline.py and lesson_figures.py all build on it."""

from __future__ import annotations

import functools

# The site's content column: sphinx-book-theme 1.3 (pydata-sphinx-theme 0.17) in a 1280 x 800
# browser window, primary sidebar open, shows a cell's output 688 CSS px wide (article.bd-article is
# 752 px less 2 x 32 px of padding; measured in headless Chromium on a built page, with and without
# the page's table of contents; 790 px from a 1440 px window up, 755 px at 1024 px).
CONTENT_WIDTH_PX = 688
# Charts are PNGs at this many pixels per inch (the inline backend saves at the figure's own dpi)...
FIGURE_DPI = 100
# ...and this wide: the inline backend saves with bbox_inches="tight" and 0.1 in of padding a side,
# so the image is at most 6.6 x 100 + 20 = 680 px, under CONTENT_WIDTH_PX: shown at its own size,
# never scaled down, a point of text is 100 / 72 = 1.39 CSS px.
FIGURE_WIDTH_IN = 6.6
# The smallest text a chart may show, in CSS px at that scale (issue 28), and the point sizes used:
# 8 pt = 11.1 px (bar values, cell numbers), 9 pt = 12.5 px (ticks, axis labels, legends),
# 10 pt = 13.9 px (titles).
MIN_TEXT_PX = 10
SMALL_PT, TEXT_PT, TITLE_PT = 8, 9, 10


def new_chart(nrows: int = 1, ncols: int = 1, height: float = 4.0, **kwargs):
    """``plt.subplots`` for a chapter's chart: FIGURE_WIDTH_IN wide at FIGURE_DPI, in constrained
    layout (nothing drawn outside the figure), with TEXT_PT ticks and axis labels."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(FIGURE_WIDTH_IN, height), dpi=FIGURE_DPI, layout="constrained",
                             **kwargs)
    for ax in fig.axes:
        ax.tick_params(labelsize=TEXT_PT)
        ax.xaxis.label.set_fontsize(TEXT_PT)
        ax.yaxis.label.set_fontsize(TEXT_PT)
    return fig, axes


@functools.lru_cache(maxsize=1)
def _renderer():
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(10, 10, FIGURE_DPI)


def text_width_px(text: str, fontsize: float = TEXT_PT) -> float:
    """How wide ``text`` draws at ``fontsize`` points in a chart (its widest line), in pixels, as
    the PNG renderer lays it out."""
    from matplotlib.font_manager import FontProperties

    prop = FontProperties(size=fontsize)
    return max(_renderer().get_text_width_height_descent(line, prop, ismath=False)[0] if line.strip() else 0.0
               for line in text.splitlines() or [""])


def wrap(text: str, width_px: float, fontsize: float = TEXT_PT) -> str:
    """``text`` broken at spaces into lines no wider than ``width_px`` at ``fontsize`` (a single
    word wider than that keeps its own line): long labels wrap, never end in '...'."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width_px(f"{lines[-1]} {word}", fontsize) <= width_px:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return "\n".join(lines)


def legend_above(ax, title: str | None = None, fontsize: float = TEXT_PT):
    """The axes' legend over its top edge, left-aligned (with ``title``, the panel's heading, on
    its first line): it covers no bar or point. As many columns as fit the axes' width."""
    fig = ax.figure
    fig.draw_without_rendering()  # lay the figure out so far: the axes' width
    width = ax.get_position().width * fig.get_figwidth() * fig.dpi
    title = wrap(title, width, TITLE_PT) if title else title
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        if title:
            ax.set_title(title, fontsize=TITLE_PT, loc="left")
        return None
    widths = [text_width_px(label, fontsize) + 3.8 * fontsize * fig.dpi / 72 for label in labels]  # + handle, gaps

    def fits(ncols: int) -> bool:  # the legend fills each column top to bottom, ceil(n / ncols) entries a column
        per = -(-len(widths) // ncols)
        return sum(max(widths[i:i + per]) for i in range(0, len(widths), per)) <= width

    ncols = next((n for n in range(len(labels), 0, -1) if fits(n)), 1)
    return ax.legend(loc="lower left", bbox_to_anchor=(0, 1), borderaxespad=0.3, frameon=False, ncols=ncols,
                     fontsize=fontsize, title=title, title_fontsize=TITLE_PT, alignment="left",
                     handlelength=1.6, columnspacing=1.2)


def heading(ax) -> str:
    """A panel's heading: its legend's title (legend_above), else its axes title."""
    legend = ax.get_legend()
    title = legend.get_title().get_text() if legend else ""
    return title or ax.get_title(loc="left") or ax.get_title()
