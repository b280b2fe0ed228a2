"""The picture beside a failed check: where the wrong elements are, one strip per row (a 1-d
output is one row), so a tail, a whole row, every other element or a stripe of columns shows at a
glance. Long rows and many rows are pooled: a cell is red when any element it covers is wrong."""

from __future__ import annotations

import torch

MAX_ROWS, MAX_COLS = 48, 512


def pooled(mask: torch.Tensor) -> torch.Tensor:
    """``mask`` as at most MAX_ROWS x MAX_COLS cells, each True when any element under it is."""
    grid = mask.reshape(-1, mask.shape[-1]) if mask.dim() > 1 else mask.reshape(1, -1)
    rows, cols = grid.shape
    r_step, c_step = -(-rows // MAX_ROWS), -(-cols // MAX_COLS)
    pad = torch.zeros(-(-rows // r_step) * r_step, -(-cols // c_step) * c_step, dtype=torch.bool)
    pad[:rows, :cols] = grid
    return pad.reshape(pad.shape[0] // r_step, r_step, pad.shape[1] // c_step, c_step).any(3).any(1)


def strip(mask: torch.Tensor, title: str):
    """A small matplotlib figure of ``mask`` (True = wrong)."""
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    cells = pooled(mask)
    rows = mask.reshape(-1, mask.shape[-1]).shape[0] if mask.dim() > 1 else 1
    fig = Figure(figsize=(7, 0.9 + 0.12 * min(cells.shape[0], 24)))
    ax = fig.add_subplot()
    ax.imshow(cells.numpy(), aspect="auto", interpolation="nearest", cmap=ListedColormap(["#e8eef4", "#d62728"]),
              vmin=0, vmax=1, extent=(0, mask.shape[-1], rows, 0))
    ax.set_xlabel("element within the row" if mask.dim() > 1 else "element")
    ax.set_ylabel("row" if mask.dim() > 1 else "")
    ax.set_yticks([] if rows == 1 else ax.get_yticks())
    ax.set_title(title, fontsize=9)
    return fig


def png(mask: torch.Tensor, title: str) -> bytes:
    """The strip as PNG bytes: an image every front end shows (JupyterLab, nbconvert, the site,
    an executed notebook's file), with no inline backend or pyplot state needed. The margins are
    cut to the drawing when saved (tight_layout warned on the short strips)."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = strip(mask, title)
    FigureCanvasAgg(fig)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100, bbox_inches="tight")
    return out.getvalue()


def show(mask: torch.Tensor, title: str) -> None:
    """Displays the strip as an image in a notebook; elsewhere (a terminal, a test) does nothing."""
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:
        return
    if get_ipython() is None or mask is None or mask.numel() < 2:
        return
    display(Image(data=png(mask, title), format="png"))
