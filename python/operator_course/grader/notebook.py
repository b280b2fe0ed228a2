"""The lab notebook format, in one place: how solutions, answers and checks are marked.

Instructor notebooks (labs/*.ipynb) mark, in each cell's metadata under "lab":
  {"answer": ID}                         a cell the student writes; solution lines sit between
                                         SOLUTION_BEGIN and SOLUTION_END comment lines (exactly
                                         those: a near miss, a nested or unclosed region is an error)
  {"check": ID, "points": P}             a graded check: it passes when the cell raises nothing
  {"check": ID, "points": P, "hidden": true}   instructor-only: removed from the release
  {"check": ID, "points": P, "needs": "gpu"}   graded only where the grader has a GPU
and, at the notebook level, {"lab": {"id": "01_copy", "title": ...}}.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from operator_course.lab.starter import CONTINUES, cuda_starter, open_braces

SOLUTION_BEGIN = "### BEGIN SOLUTION"
SOLUTION_END = "### END SOLUTION"
STUB = 'raise NotImplementedError("your code here: see the task above")'
# A comment that reads like a marker without being one ("### END SOLUTOIN", "##END SOLUTION",
# "# begin solution"): matched on its letters alone, so case and spacing do not matter. Such a
# line would otherwise pass as an ordinary comment and ship the region it was meant to close.
_NEAR_MARKER = re.compile(r"(begin|end)[a-z]{0,6}sol")


class MarkerError(ValueError):
    """A solution marker the release cannot trust: misspelled, nested, unopened or unclosed."""


def _regions(source: str, where: str) -> list[tuple[int, int]]:
    """(BEGIN line, END line) of each solution region, 0-based, in order. ``where`` names the
    file and cell in errors; the line number within the cell is added here."""
    regions, begin = [], None
    for n, line in enumerate(source.split("\n")):
        text = line.strip()
        here = f"{where}, line {n + 1}"
        if text == SOLUTION_BEGIN:
            if begin is not None:
                raise MarkerError(f"{here}: {SOLUTION_BEGIN!r} inside the region opened at line {begin + 1}")
            begin = n
        elif text == SOLUTION_END:
            if begin is None:
                raise MarkerError(f"{here}: {SOLUTION_END!r} without a {SOLUTION_BEGIN!r} before it")
            regions.append((begin, n))
            begin = None
        elif text.startswith("#") and _NEAR_MARKER.match(re.sub(r"[^a-z]", "", text.lower())):
            raise MarkerError(f"{here}: {text!r} looks like a solution marker but is neither "
                              f"{SOLUTION_BEGIN!r} nor {SOLUTION_END!r}")
    if begin is not None:
        raise MarkerError(f"{where}, line {begin + 1}: {SOLUTION_BEGIN!r} has no {SOLUTION_END!r} after it")
    return regions


def lab_meta(cell) -> dict:
    return cell.get("metadata", {}).get("lab", {})


def checks(nb) -> list[tuple[int, dict]]:
    """(cell index, metadata) of every graded check, in order."""
    return [(i, lab_meta(c)) for i, c in enumerate(nb.cells) if "check" in lab_meta(c)]


def lab_id(nb, path: Path) -> str:
    return nb.metadata.get("lab", {}).get("id", path.stem)


def strip_solutions(source: str, where: str = "<cell>") -> str:
    """Each marked solution region becomes a stub raising NotImplementedError, indented as the
    BEGIN marker was; a region that continues a CUDA kernel's text (``CUDA_SOURCE += r\"\"\"``)
    becomes the CUDA starter instead (lab/starter.py: it compiles, and the checks say the kernel
    is not written yet). Raises MarkerError, naming ``where`` and the line, on a marker it cannot
    trust rather than guess where a solution ends."""
    lines = source.split("\n")
    for begin, end in reversed(_regions(source, where)):  # from the end: earlier indices stay valid
        indent = lines[begin][:len(lines[begin]) - len(lines[begin].lstrip(" \t"))]
        if begin + 1 < end and CONTINUES.match(lines[begin + 1]):
            stub = cuda_starter(indent, open_braces("\n".join(lines[:begin])))
        else:
            stub = [indent + STUB]
        # the stub ends its line even where the END marker ended the cell
        lines[begin:end + 1] = stub + ([""] if end == len(lines) - 1 else [])
    return "\n".join(lines)


def solution_lines(source: str, where: str = "<cell>") -> list[str]:
    """The non-trivial lines inside solution regions (what must never reach a student)."""
    lines = source.split("\n")
    inside = (line.strip() for begin, end in _regions(source, where) for line in lines[begin + 1:end])
    return [text for text in inside if len(text) >= 12 and not text.startswith("#")]


def read(path: Path):
    return nbformat.read(str(path), as_version=4)


def instructor_labs(folder: Path) -> dict[str, Path]:
    """lab id -> instructor notebook, for every notebook directly in ``folder``."""
    return {lab_id(read(p), p): p for p in sorted(folder.glob("*.ipynb"))}
