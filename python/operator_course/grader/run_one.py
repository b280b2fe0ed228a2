"""Execute one assembled lab notebook, inside the student's sandbox (grading stage 3):

    python -m operator_course.grader.run_one NOTEBOOK TIMEOUT

Writes executed.ipynb (for the instructor's review and the student's feedback) and
report.json (how each code cell ended) into the work dir. Neither decides a grade: the
export cells leave artifacts/ behind, which the grader judges itself."""

from __future__ import annotations

import json
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError


def outcome(cell) -> str:
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if errors:
        first = errors[0]
        if first.get("ename") == "KeyboardInterrupt":  # nbclient interrupts a cell that runs past the timeout
            return "interrupted: it ran past the per-cell timeout"
        return f"error: {first.get('ename', '')}: {first.get('evalue', '')}"[:2000]
    return "ok" if cell.get("execution_count") is not None else "not run"


def main(argv: list[str]) -> int:
    path, timeout = argv[0], float(argv[1])
    nb = nbformat.read(path, as_version=4)
    # "immediate": the kernel is killed once the last cell has answered. Every artifact the grader
    # reads was written by a cell that has finished; a graceful shutdown only let the kernel's
    # interpreter tear down torch and TileLang, ~3 s of CPU per submission (measured: 14.4 s -> 11.5 s
    # of user time for lab 1's notebook).
    client = NotebookClient(nb, timeout=timeout, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": "."}}, shutdown_kernel="immediate")
    stopped = None
    try:
        client.execute()
    except CellTimeoutError:
        stopped = f"a cell ran past the {timeout:g} s limit"
    except DeadKernelError:
        stopped = "the kernel died (a crash, or the process exited)"
    except Exception as e:  # noqa: BLE001 - report whatever stopped the run, do not lose the rest
        stopped = f"{type(e).__name__}: {e}"[:2000]
    cells = [outcome(c) if c.cell_type == "code" else None for c in nb.cells]
    nbformat.write(nb, "executed.ipynb")
    with open("report.json", "w") as f:
        json.dump({"cells": cells, "stopped": stopped}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
