"""CUDA_SOURCE's line numbers as the student's cell counts them.

Reports name lines of the CUDA_SOURCE string (nvcc's `CUDA_SOURCE(6): error`, the CPU run's `at
CUDA_SOURCE line 12`); the cell that builds the string counts differently (its first line is a
comment, the string starts after `r\"\"\"`, the handout's starter continues it in a second literal),
so a student looked two lines off. In a notebook each cited line is also given as the line of the
cell that holds it, found by its text in IPython's input history (once, or not at all)."""

from __future__ import annotations

import re

_CITED = re.compile(r"CUDA_SOURCE(?: line |\()(\d+)\)?|line (\d+) of CUDA_SOURCE")


def answer_cell(source: str) -> str | None:
    """The latest cell run in this notebook whose lines include every non-blank line of ``source``."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    lines = [ln for ln in source.split("\n") if ln.strip()]
    if shell is None or not lines:
        return None
    for text in reversed(shell.user_ns.get("_ih", [])):
        rows = set(text.split("\n"))
        if all(ln in rows for ln in lines):
            return text
    return None


def with_cell_lines(message: str, source: str, cell: str | None = None) -> str:
    """``message`` with "(cell line M)" after each CUDA_SOURCE line it cites whose text is on exactly
    one line M of the answer cell (``cell``, else found in the notebook's history)."""
    cell = cell if cell is not None else answer_cell(source)
    if cell is None:
        return message
    src, rows = source.split("\n"), cell.split("\n")

    def hits(n: int) -> list[int]:
        text = src[n - 1] if 1 <= n <= len(src) else ""
        return [k + 1 for k, row in enumerate(rows) if row == text] if text.strip() else []

    def note(m: re.Match) -> str:
        n = int(m.group(1) or m.group(2))
        found = hits(n)
        if len(found) > 1:  # a repeated line (`__syncthreads();`): the one its nearest unique neighbour implies
            near = next((h[0] - k for d in range(1, len(src)) for k in (n - d, n + d) if len(h := hits(k)) == 1), None)
            found = [n + near] if near is not None and n + near in found else found
        return f"{m.group(0)} (cell line {found[0]})" if len(found) == 1 else m.group(0)

    return _CITED.sub(note, message)
