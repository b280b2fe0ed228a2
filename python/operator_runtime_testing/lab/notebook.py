"""The lab notebook format, in one place: how solutions, answers and checks are marked.

Instructor notebooks (labs/*.ipynb) mark, in each cell's metadata under "lab":
  {"answer": ID}                         a cell the student writes; solution lines sit between
                                         SOLUTION_BEGIN and SOLUTION_END comment lines
  {"check": ID, "points": P}             a graded check: it passes when the cell raises nothing
  {"check": ID, "points": P, "hidden": true}   instructor-only: removed from the release
  {"check": ID, "points": P, "needs": "gpu"}   graded only where the grader has a GPU
and, at the notebook level, {"lab": {"id": "01_copy", "title": ...}}.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

SOLUTION_BEGIN = "### BEGIN SOLUTION"
SOLUTION_END = "### END SOLUTION"
STUB = 'raise NotImplementedError("your code here: see the task above")'
_REGION = re.compile(rf"^([ \t]*){re.escape(SOLUTION_BEGIN)}[^\n]*\n.*?^[ \t]*{re.escape(SOLUTION_END)}[^\n]*(\n|$)",
                     re.S | re.M)


def lab_meta(cell) -> dict:
    return cell.get("metadata", {}).get("lab", {})


def checks(nb) -> list[tuple[int, dict]]:
    """(cell index, metadata) of every graded check, in order."""
    return [(i, lab_meta(c)) for i, c in enumerate(nb.cells) if "check" in lab_meta(c)]


def lab_id(nb, path: Path) -> str:
    return nb.metadata.get("lab", {}).get("id", path.stem)


def strip_solutions(source: str) -> str:
    """Each marked solution region becomes a stub raising NotImplementedError, indented as the
    BEGIN marker was."""
    return _REGION.sub(lambda m: f"{m.group(1)}{STUB}\n", source)


def solution_lines(source: str) -> list[str]:
    """The non-trivial lines inside solution regions (what must never reach a student)."""
    lines = []
    for m in _REGION.finditer(source):
        for line in m.group(0).splitlines()[1:-1]:
            text = line.strip()
            if len(text) >= 12 and not text.startswith("#"):
                lines.append(text)
    return lines


def read(path: Path):
    return nbformat.read(str(path), as_version=4)


def instructor_labs(folder: Path) -> dict[str, Path]:
    """lab id -> instructor notebook, for every notebook directly in ``folder``."""
    return {lab_id(read(p), p): p for p in sorted(folder.glob("*.ipynb"))}
