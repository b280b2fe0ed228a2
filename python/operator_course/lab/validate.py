"""Validate a lab before handing it in: runs your saved notebook in a fresh kernel and reports,
per visible check, passed or failed and the points it would earn.

    python -m operator_course.lab.validate 01_copy         # in a terminal (or a notebook's path)
    lab.validate("01_copy")                                # in a notebook cell; lab.validate(): this notebook

Only the visible checks run: the check cells of the lab as handed out, on the inputs the
notebook's checks draw. Hidden checks (the instructor's, not in your notebook) are neither run
nor reported, and the grader runs every check again on inputs of its own, after the deadline:
your grade can be lower than what this says. As the grader does, it takes your answer cells
into the lab as handed out ($OPRT_HANDOUT, which the hub sets): code you wrote in other cells
does not run, and an edited check cell runs as handed out. Without a handout it runs your
notebook as it is, without any hidden check cell. It runs as you, with a time limit per cell;
it reads the saved file (unsaved edits are not in it) and writes nothing into your labs folder.
A check a machine without a GPU cannot run (performance) is listed as graded later.

Exit status: 0 when every check run here passed, 1 when one failed, 2 when nothing could run."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .submit import (SubmitError, answers, handout_folder, labs_folder, lab_id, notebooks, read_notebook, resolve,
                     session_notebook, validating)

TIMEOUT = 300  # seconds per cell, as the grader's default
NOT_CHECKED = re.compile(r"(needs a GPU|: not checked)")  # what checks.py prints when it cannot check here
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class ValidateError(SubmitError):
    """Why nothing was validated."""


@dataclass
class Check:
    id: str
    points: float
    status: str  # passed | failed | not checked | not run
    reason: str = ""

    @property
    def earned(self) -> float:
        return self.points if self.status == "passed" else 0.0


@dataclass
class Validation:
    lab: str
    notebook: str
    checks: list[Check] = field(default_factory=list)
    stopped: str | None = None

    @property
    def earned(self) -> float:
        return sum(c.earned for c in self.checks)

    @property
    def possible(self) -> float:
        """The points of the visible checks that ran (or should have) here."""
        return sum(c.points for c in self.checks if c.status != "not checked")

    @property
    def later(self) -> float:
        """The points of visible checks this machine cannot run (a GPU's)."""
        return sum(c.points for c in self.checks if c.status == "not checked")

    def as_dict(self) -> dict:
        return {**asdict(self), "earned": self.earned, "possible": self.possible, "later": self.later}

    def __repr__(self) -> str:
        return f"Validation({self.lab!r}: {self.earned:g} of {self.possible:g} visible points)"


def _meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("lab") if isinstance(cell.get("metadata"), dict) else None
    return meta if isinstance(meta, dict) else {}


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _points(meta: dict) -> float:
    try:
        return float(meta.get("points", 1))
    except (TypeError, ValueError):
        return 1.0


def plan(mine: dict, given: dict | None) -> tuple[list[dict], list[tuple[int, str, float]]]:
    """(the code cells to run, (cell index, check id, points) of each visible check among them).
    With the handout ``given``: its code cells, your answer cells in place of its own (the
    grader's assembly). Without: your code cells, less any check cell marked hidden."""
    cells, checks = [], []
    if given is not None:
        mine_answers = answers(mine)
        for cell in given.get("cells", []):
            if cell.get("cell_type") != "code":
                continue
            meta = _meta(cell)
            if meta.get("hidden"):
                continue
            source = _source(cell)
            if isinstance(meta.get("answer"), str):
                source = mine_answers.get(meta["answer"], "# (this answer cell is not in your notebook)")
            if isinstance(meta.get("check"), str):
                checks.append((len(cells), meta["check"], _points(meta)))
            cells.append({"source": source, "metadata": {}})
    else:
        for cell in mine.get("cells", []):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            meta = _meta(cell)
            if meta.get("hidden"):
                continue
            if isinstance(meta.get("check"), str):
                checks.append((len(cells), meta["check"], _points(meta)))
            cells.append({"source": _source(cell), "metadata": {}})
    return cells, checks


def execute(cells: list[dict], cwd: Path, timeout: float):
    """Runs ``cells`` in a fresh python3 kernel (its sockets in a private folder: no TCP port), in
    ``cwd``, every cell even after one fails; (the executed notebook, why the run stopped or None)."""
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c["source"]) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    private = tempfile.mkdtemp(prefix="oprt-validate-")
    stopped = None
    try:
        km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(private, "k"),
                           connection_file=os.path.join(private, "kernel.json"))
        client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=True,
                                resources={"metadata": {"path": str(cwd)}})
        try:
            client.execute(env={**os.environ, "OPRT_VALIDATING": "1"})
        except CellTimeoutError:
            stopped = f"a cell ran past the {timeout:g} s limit"
        except DeadKernelError:
            stopped = "the kernel died (a crash, or the process exited)"
        except Exception as e:  # noqa: BLE001 - say what stopped the run, keep what ran
            stopped = f"{type(e).__name__}: {e}"[:2000]
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return nb, stopped


def _text(cell, kind: str) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == kind)


def verdicts(nb, checks: list[tuple[int, str, float]], stopped: str | None) -> list[Check]:
    found = []
    for index, check, points in checks:
        cell = nb.cells[index]
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        stdout = _text(cell, "stdout")
        if errors:
            first = errors[0]
            if first.get("ename") == "KeyboardInterrupt":
                reason = "it ran past the time limit of a cell"
            else:
                reason = ANSI.sub("", f"{first.get('ename', '')}: {first.get('evalue', '')}")
            found.append(Check(check, points, "failed", _cut(reason)))
        elif cell.get("execution_count") is None:
            found.append(Check(check, points, "not run", f"the run stopped before it: {stopped or 'an earlier cell'}"))
        elif (line := next((s for s in stdout.splitlines() if NOT_CHECKED.search(s)), None)):
            found.append(Check(check, points, "not checked", line.strip()))
        else:
            found.append(Check(check, points, "passed"))
    return found


def _cut(text: str, lines: int = 20, chars: int = 2000) -> str:
    kept = "\n".join(text.splitlines()[:lines])[:chars]
    return kept if kept == text else kept + "\n[...]"


def target(lab: str | None, folder: Path, handout: Path | None) -> tuple[str, Path]:
    """(lab id, notebook) for a lab id, a notebook's name or path, or (None) this kernel's notebook."""
    if lab is None:
        own = session_notebook()
        if own is None or not own.is_file():
            raise ValidateError(f"which lab? name it, e.g. lab.validate(\"01_copy\") or `python -m "
                                f"operator_course.lab.validate 01_copy`; the labs in {folder}: "
                                f"{', '.join(notebooks(folder)) or 'none'}")
        lab = str(own)
    path = Path(lab).expanduser()
    if lab.endswith(".ipynb") and (path.is_file() or len(path.parts) > 1):
        if not path.is_file():
            raise ValidateError(f"no notebook {path}")
        _, nb = read_notebook(path)
        return lab_id(nb, path), path
    return resolve(lab, folder, handout)


def validate(lab: str | None = None, *, handout: Path | None = None, folder: Path | None = None,
             timeout: float = TIMEOUT, say=print) -> Validation:
    """Runs the visible checks of ``lab``'s saved notebook (see the module's docstring) and says
    what they would earn; returns the Validation."""
    folder = Path(folder) if folder is not None else labs_folder()
    handout = Path(handout) if handout is not None else handout_folder()
    lab_name, path = target(lab, folder, handout)
    _, mine = read_notebook(path)
    given_path = notebooks(handout).get(lab_name) if handout else None
    given = json.loads(given_path.read_bytes()) if given_path else None
    saved = datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc)
    say(f"validate {lab_name}: {path} as saved at {saved:%Y-%m-%d %H:%M:%S} UTC (edits not saved are not in it)")
    say("running it in a fresh kernel: " + ("your answer cells in the lab as handed out, as the grader takes them"
                                            if given else "your notebook's cells, without hidden checks") + " ...")
    cells, checks = plan(mine, given)
    if not checks:
        raise ValidateError(f"{path} has no visible check to run")
    nb, stopped = execute(cells, path.parent, timeout)
    result = Validation(lab_name, str(path), verdicts(nb, checks, stopped), stopped)
    report(result, say)
    return result


def report(result: Validation, say=print) -> None:
    width = max(len(c.id) for c in result.checks)
    for c in result.checks:
        status = "FAILED" if c.status == "failed" else c.status
        line = f"  {status:<12} {c.id:<{width}}  {'-' if c.status == 'not checked' else f'{c.earned:g}'} / {c.points:g}"
        if c.status == "not checked":
            line += f"  ({c.reason}; graded later, on a machine that can)"
        say(line)
        if c.status in ("failed", "not run"):
            say("      " + c.reason.replace("\n", "\n      "))
    if result.stopped:
        say(f"the run stopped: {result.stopped}")
    later = f" (and {result.later:g} more in checks this machine cannot run: graded later)" if result.later else ""
    say(f"You would earn {result.earned:g} of the {result.possible:g} points of the visible checks run here{later}.")
    say("Hidden checks are graded later, and the grader runs these checks again on inputs of its own: "
        "your grade can be lower.")
    say(f"To hand this notebook in: lab.submit({result.lab!r}) in a cell, or "
        f"python -m operator_course.lab.submit {result.lab} in a terminal.")


def run(lab: str | None = None, timeout: float = TIMEOUT) -> Validation | None:
    """``lab.validate``: the command in a fresh process (your kernel's state stays out of it),
    its report printed into the cell as it comes."""
    if validating():
        print("validate: skipped (validate is running this notebook)")
        return None
    if lab is None:
        own = session_notebook()
        lab = str(own) if own is not None else None
    with tempfile.TemporaryDirectory(prefix="oprt-validate-") as tmp:
        summary = Path(tmp) / "summary.json"
        argv = [sys.executable, "-m", "operator_course.lab.validate", *([lab] if lab else []),
                "--timeout", str(timeout), "--json", str(summary)]
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
            for line in proc.stdout:
                print(line, end="", flush=True)
        if not summary.exists():
            return None
        data = json.loads(summary.read_text())
    return Validation(data["lab"], data["notebook"], [Check(**{k: c[k] for k in ("id", "points", "status", "reason")})
                                                       for c in data["checks"]], data.get("stopped"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m operator_course.lab.validate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lab", nargs="?", metavar="LAB", help="lab id (01_copy), notebook name or path")
    parser.add_argument("--handout", type=Path, help="folder of the labs as handed out (default $OPRT_HANDOUT)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per cell")
    parser.add_argument("--json", type=Path, help="also write the result here (lab.validate reads it)")
    args = parser.parse_args(argv)
    try:
        result = validate(args.lab, handout=args.handout, timeout=args.timeout)
    except SubmitError as e:
        print(f"validate: {e}", file=sys.stderr)
        return 2
    if args.json:
        data = result.as_dict()
        data["checks"] = [{**asdict(c), "earned": c.earned} for c in result.checks]
        args.json.write_text(json.dumps(data, indent=2))
    return 1 if any(c.status in ("failed", "not run") for c in result.checks) else 0


class _Command(types.ModuleType):
    """``lab.validate`` is this module, callable: lab.validate("01_copy") is run("01_copy")
    (a package's submodule of a function's name replaces the function once imported)."""

    def __call__(self, lab: str | None = None, timeout: float = TIMEOUT) -> Validation | None:
        return run(lab, timeout)


if __name__ == "__main__":
    sys.exit(main())
else:
    sys.modules[__name__].__class__ = _Command
