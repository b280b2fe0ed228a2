"""The starter a CUDA answer cell is handed out with (grader/notebook.py's strip_solutions writes
it, cuda/cuda_build.py recognises it): the kernel's opening lines as the instructor wrote them,
then NOT_WRITTEN and the braces that close the kernel, so the source compiles as handed out and
every check says the kernel is not written yet instead of what nvcc makes of half a template."""

from __future__ import annotations

import re

NOT_WRITTEN = "// TODO: your kernel's body here"
CONTINUES = re.compile(r'^\s*CUDA_SOURCE \+= r"""')  # a solution region that continues the kernel's text
_CUDA_TEXT = re.compile(r'r"""(.*?)"""', re.S)


def open_braces(cell_before: str) -> int:
    """Braces the CUDA text of ``cell_before`` (its r\"\"\"...\"\"\" strings) leaves open."""
    text = "".join(_CUDA_TEXT.findall(cell_before))
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)  # braces in comments do not count
    return max(text.count("{") - text.count("}"), 0)


def cuda_starter(indent: str, opened: int) -> list[str]:
    """The lines that stand for a CUDA solution region: the body marker, then ``opened`` braces."""
    # not `+=` as the solution writes it: the release's leak check (independent of this code) looks
    # for every line of the solution, that one included
    return [indent + 'CUDA_SOURCE = CUDA_SOURCE + r"""', "  " + NOT_WRITTEN, *(["}"] * opened), '"""']


def not_written(source: str) -> str | None:
    """The message for a CUDA source that still holds the starter's marker, else None."""
    if NOT_WRITTEN not in source:
        return None
    line = source[:source.index(NOT_WRITTEN)].count("\n") + 1
    return (f"your kernel is not written yet: line {line} of CUDA_SOURCE is still the starter's `{NOT_WRITTEN}`. "
            "Write the kernel's body there (the task above says what it computes) and delete that line")
