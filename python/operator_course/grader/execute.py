"""Grading stage 3, execute: run the assembled notebook in the student's sandbox and take
back, as capped data, what it left: the artifacts of each check, the executed notebook and
how each cell ended. Where the sandbox is dead and nothing in it can change any more."""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .submissions import read_regular

MAX_ARTIFACT = 4 << 20  # one serialized program or source
MAX_EXECUTED = 16 << 20  # the executed notebook kept for review
ARTIFACT_NAMES = ("error.txt", "report.txt", "source.cu", "float32.json", "float16.json", "bfloat16.json",
                  "gpu-float32.json", "gpu-float16.json", "gpu-bfloat16.json")  # export.py's (gpu-: on a CPU grader)


@dataclass
class Executed:
    artifacts: dict[str, dict[str, bytes]] = field(default_factory=dict)  # check -> file name -> bytes
    report: dict = field(default_factory=dict)  # run_one's cells and stopped, when it got that far
    problem: str | None = None  # why the run gave nothing (timeout, a crash)


def execute(nb, checks: list[str], workdir: Path, runner, timeout: float, log: Path, kept: Path) -> Executed:
    """Runs ``nb`` with ``runner`` (a Sandbox, or Unsandboxed); ``kept`` receives executed.ipynb;
    the artifacts of ``checks`` are read back."""
    workdir.mkdir(parents=True)
    nbformat.write(nb, str(workdir / "submission.ipynb"))
    cells = sum(c.cell_type == "code" for c in nb.cells)
    outcome = runner.run([sys.executable, "-m", "operator_course.grader.run_one", "submission.ipynb",
                          str(timeout)], workdir, timeout * cells + 120, log)
    result = Executed()
    if outcome.timed_out:
        result.problem = "the notebook ran out of time (every process of it was stopped)"
    try:
        result.report = json.loads(read_regular(workdir / "report.json", 1 << 20))
        if not isinstance(result.report, dict):
            result.report = {}
    except Exception:  # noqa: BLE001 - no report: the run died or the student's code removed it
        result.problem = result.problem or f"the notebook run ended without a report (exit code {outcome.returncode})"
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(read_regular(workdir / "executed.ipynb", MAX_EXECUTED))
    except Exception:  # noqa: BLE001 - nothing to keep
        pass
    root = workdir / "artifacts"
    for check in checks:  # only the files an export writes: a sandbox may have left millions
        if _real_dir(root) and _real_dir(root / check):
            files = {}
            for name in ARTIFACT_NAMES:
                try:
                    files[name] = read_regular(root / check / name, MAX_ARTIFACT)
                except (OSError, ValueError):
                    continue  # absent, a link, or oversized: no artifact
            result.artifacts[check] = files
    return result


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def first_error(report: dict) -> str | None:
    """The first cell that raised, in the student's words, for reasons."""
    cells = report.get("cells") if isinstance(report.get("cells"), list) else []
    for i, state in enumerate(cells):
        if isinstance(state, str) and state not in ("ok", "not run"):
            return f"code cell {i}: {state[:MAX_STATE]}"
    stopped = report.get("stopped")
    return stopped[:MAX_STATE] if isinstance(stopped, str) else None


MAX_STATE = 2000  # characters of a cell's state quoted in a reason: report.json is the sandbox's to write
