"""The instructor's answers, read from labs/ (the solved notebooks), for tests that run them."""

from __future__ import annotations

import functools
from pathlib import Path

from operator_course.grader.notebook import instructor_labs, lab_meta, read

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def cuda_solutions() -> dict[str, str]:
    """op -> the CUDA source of its lab's answer cell, run as the notebook runs it (it sets CUDA_SOURCE)."""
    out = {}
    for path in instructor_labs(ROOT / "labs").values():
        for cell in read(path).cells:
            answer = lab_meta(cell).get("answer", "")
            if answer.endswith("-cuda"):
                namespace: dict = {}
                exec(cell.source, namespace)
                out[answer.removesuffix("-cuda")] = namespace["CUDA_SOURCE"]
    return dict(out)
