"""Execute one assembled lab notebook and report, per cell, how it ended. Run by the grader
in a process of its own, in a temp dir:

    python -m operator_runtime_testing.lab.run_one   (a JSON job on stdin)

The job (on stdin, so the student's kernel cannot read it from this process's arguments or
environment) holds a nonce; the report is the one stdout line that starts with it. Anything
the notebook prints goes to the kernel's own streams and cannot pose as a report.
"""

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
        return f"error: {first.get('ename', '')}: {first.get('evalue', '')}"[:300]
    return "ok" if cell.get("execution_count") is not None else "not run"


def main() -> int:
    job = json.loads(sys.stdin.readline())
    nb = nbformat.read(job["notebook"], as_version=4)
    client = NotebookClient(nb, timeout=job["timeout"], allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": job["cwd"]}})
    stopped = None
    try:
        client.execute()
    except CellTimeoutError:
        stopped = f"timed out after {job['timeout']} s"
    except DeadKernelError:
        stopped = "the kernel died (a crash, or the process exited)"
    except Exception as e:  # noqa: BLE001 - report whatever stopped the run, do not lose the rest
        stopped = f"{type(e).__name__}: {e}"[:300]
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            cells.append(None)
            continue
        state = outcome(cell)
        if state == "not run" and stopped:
            state = f"not run: {stopped}"
        cells.append(state)
    print(job["nonce"] + json.dumps({"cells": cells, "stopped": stopped}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
