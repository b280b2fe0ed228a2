"""Grade a folder of lab submissions.

    python -m operator_runtime_testing.lab.grade SUBMISSIONS --labs labs/ -o _build/grades \\
        [--jobs 4] [--timeout 300]

SUBMISSIONS holds one folder per student (with any of the lab notebooks inside) or one
notebook per student (``alice.ipynb``); a notebook's lab is its metadata's lab id, else its
file name. Each submission is graded as the instructor notebook with only the student's answer
cells taken from the submission: every other cell, checks included, comes from the instructor
source (a check the student edited is restored and the feedback says so; hidden checks run
too). Each runs in its own process and temp dir with a per-cell timeout, several at once; a
hang, a crash or a malformed notebook costs that submission its checks, never the run; an
answer that reaches into the checking code scores 0 with a reason asking for a human review.

Writes OUT/gradebook.csv (student, lab, check, points, max, reason) and OUT/feedback/<student>.md.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import nbformat
import torch

from .notebook import checks, instructor_labs, lab_id, lab_meta, read
from .release import release_notebook


# An answer never needs to reach the checking code; one that does may be trying to pass checks
# without passing them (say, `lab.check_tilelang = print`). Such a submission scores 0 and the
# reason says to review it by hand.
TOUCHES_CHECKER = re.compile(r"\blab\s*\.\s*\w+\s*=|operator_runtime_testing|sys\.modules|builtins|"
                             r"assert_matches_torch|setattr\s*\(\s*lab\b")


@dataclass
class Row:
    student: str
    lab: str
    check: str
    points: float
    max: float
    reason: str

    def __post_init__(self):  # one line per row, short enough to read in a spreadsheet
        self.reason = " / ".join(line.strip() for line in self.reason.splitlines() if line.strip())[:300]


def find_submissions(folder: Path, labs: dict[str, Path]) -> list[tuple[str, str, Path]]:
    """(student, lab id, notebook path) for every submission; unknown notebooks are reported."""
    found = []
    for entry in sorted(folder.iterdir()):
        notebooks = sorted(entry.glob("*.ipynb")) if entry.is_dir() else [entry] if entry.suffix == ".ipynb" else []
        student = entry.name if entry.is_dir() else entry.stem
        for path in notebooks:
            found.append((student, _lab_of(path, labs), path))
    return found


def _lab_of(path: Path, labs: dict[str, Path]) -> str:
    try:
        lab = lab_id(read(path), path)
    except Exception:  # noqa: BLE001 - malformed: name it by file, grading reports the error
        lab = path.stem
    if lab not in labs:  # a student's copy renamed "01_copy (1).ipynb" still names its lab in metadata
        lab = next((k for k, p in labs.items() if path.stem.startswith(p.stem)), lab)
    return lab


def assemble(instructor, submission) -> tuple[object, list[str]]:
    """The notebook to run: the instructor's, with the student's answer cells. Also notes on
    anything the student changed outside the answers (edited checks are restored)."""
    graded, notes = copy.deepcopy(instructor), []
    answers = {lab_meta(c)["answer"]: c.source for c in submission.cells if "answer" in lab_meta(c)}
    released = {lab_meta(c)["check"]: c.source for c in release_notebook(instructor).cells if "check" in lab_meta(c)}
    for cell in submission.cells:
        check = lab_meta(cell).get("check")
        if check in released and cell.source != released[check]:
            notes.append(f"check {check} was edited; graded with the original")
    for cell in graded.cells:
        answer = lab_meta(cell).get("answer")
        if answer is not None:
            if answer in answers:
                cell.source = answers[answer]
            else:
                notes.append(f"answer cell {answer} is missing; graded as empty")
                cell.source = "# (no answer submitted)"
        if cell.cell_type == "code":  # nothing of the instructor's run may count as this run's result
            cell.outputs, cell.execution_count = [], None
    return graded, notes


def run_isolated(nb, timeout: float, python: str = sys.executable) -> dict:
    """Runs the notebook through run_one in a fresh process and temp dir; returns its report."""
    with tempfile.TemporaryDirectory(prefix="oprt-grade-") as tmp:
        path = Path(tmp) / "submission.ipynb"
        nbformat.write(nb, str(path))
        nonce = secrets.token_hex(16)
        job = json.dumps({"notebook": str(path), "timeout": timeout, "cwd": tmp, "nonce": nonce})
        code_cells = sum(c.cell_type == "code" for c in nb.cells)
        try:
            result = subprocess.run([python, "-m", "operator_runtime_testing.lab.run_one"], input=job + "\n",
                                    capture_output=True, text=True, cwd=tmp, timeout=timeout * code_cells + 120,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except subprocess.TimeoutExpired:
            return {"stopped": "the grading process ran out of time", "cells": None}
        for line in result.stdout.splitlines():
            if line.startswith(nonce):
                return json.loads(line[len(nonce):])
        return {"stopped": f"the grading process failed: {result.stderr.strip()[-300:]}", "cells": None}


def grade_one(student: str, lab: str, path: Path, labs: dict[str, Path], timeout: float, gpu: bool) -> list[Row]:
    if lab not in labs:
        return [Row(student, lab, "-", 0, 0, f"{path.name} is not one of the labs ({', '.join(labs)})")]
    instructor = read(labs[lab])
    graded_checks = checks(instructor)
    try:
        submission = read(path)
    except Exception as e:  # noqa: BLE001 - any parse error: the submission is malformed
        reason = f"malformed notebook: {type(e).__name__}: {str(e)[:200]}"
        return [Row(student, lab, m["check"], 0, _max(m, gpu), reason) for _, m in graded_checks]
    nb, notes = assemble(instructor, submission)
    meddling = [lab_meta(c)["answer"] for c in nb.cells if "answer" in lab_meta(c) and TOUCHES_CHECKER.search(c.source)]
    if meddling:
        reason = f"answer cell {', '.join(meddling)} reaches into the checking code; review it by hand"
        return [Row(student, lab, m["check"], 0, _max(m, gpu), reason) for _, m in graded_checks]
    report = run_isolated(nb, timeout)
    rows = []
    for index, meta in graded_checks:
        state = report["cells"][index] if report.get("cells") else report["stopped"]
        points = meta.get("points", 1)
        if meta.get("needs") == "gpu" and not gpu:
            reason = "not graded here: needs a GPU" + ("" if state == "ok" else f" ({state})")
            rows.append(Row(student, lab, meta["check"], 0, 0 if state == "ok" else points, reason))
            continue
        ok = state == "ok"
        rows.append(Row(student, lab, meta["check"], points if ok else 0, points, "passed" if ok else state))
    for note in notes:
        rows.append(Row(student, lab, "notes", 0, 0, note))
    return rows


def _max(meta: dict, gpu: bool) -> float:
    return 0 if meta.get("needs") == "gpu" and not gpu else meta.get("points", 1)


def write_feedback(out: Path, rows: list[Row]) -> None:
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    with open(out / "gradebook.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "lab", "check", "points", "max", "reason"])
        for r in rows:
            writer.writerow([r.student, r.lab, r.check, r.points, r.max, r.reason])
    for student in sorted({r.student for r in rows}):
        mine = [r for r in rows if r.student == student]
        total, best = sum(r.points for r in mine), sum(r.max for r in mine)
        lines = [f"# Feedback for {student}", "", f"Total: {total:g} / {best:g}", ""]
        for lab in sorted({r.lab for r in mine}):
            lines += [f"## {lab}", "", "| check | points | reason |", "|---|---:|---|"]
            lines += [f"| {r.check} | {r.points:g} / {r.max:g} | {r.reason.replace('|', '/')} |"
                      for r in mine if r.lab == lab]
            lines.append("")
        (out / "feedback" / f"{student}.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--labs", type=Path, default=Path("labs"), help="instructor notebooks (default labs/)")
    parser.add_argument("-o", "--out", type=Path, default=Path("_build/grades"))
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    parser.add_argument("--timeout", type=float, default=300, help="seconds per cell")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"submissions folder {args.submissions} does not exist")
    labs = instructor_labs(args.labs)
    if not labs:
        parser.error(f"no instructor notebooks in {args.labs}")
    todo = find_submissions(args.submissions, labs)
    gpu = torch.cuda.is_available()
    rows: list[Row] = []
    from tqdm import tqdm

    with ThreadPoolExecutor(args.jobs) as pool:  # each job is a child process: threads only wait
        futures = [pool.submit(grade_one, s, lab, p, labs, args.timeout, gpu) for s, lab, p in todo]
        for future in tqdm(as_completed(futures), total=len(futures), desc="grading", unit="notebook",
                           file=sys.stderr):
            rows += future.result()
    rows.sort(key=lambda r: (r.student, r.lab))
    write_feedback(args.out, rows)
    print(f"graded {len(todo)} notebooks of {len({s for s, _, _ in todo})} students: "
          f"{args.out / 'gradebook.csv'}, feedback in {args.out / 'feedback'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
