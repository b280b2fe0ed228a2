"""Grade a folder of lab submissions.

    python -m operator_runtime_testing.lab.grade SUBMISSIONS [--labs labs/] [-o _build/grades]
        [--roster roster.txt] [--lab 01_copy ...] [--jobs N] [--timeout SECONDS]

Student code decides nothing. Each submission is graded in stages:
  1. collect   read every notebook once, as data (collect.py)
  2. assemble  the instructor's notebook with only the student's answer cells taken, each check
               replaced by a cell that exports what it judges (assemble.py)
  3. execute   run that in the student's own bubblewrap sandbox (sandbox.py, execute.py)
  4. score     run the exported kernels in a second sandbox on inputs drawn here and compare
               the outputs with references computed here (score.py, runner.py)
  5. record    merge into OUT/gradebook.csv, OUT/totals.csv, OUT/feedback/<student>.md, and
               keep each executed notebook and log under OUT/logs/<student>/<lab>/ (gradebook.py)
Instructor notebooks are read and hashed once (OUT/manifest.json). Checks this machine cannot
run (a GPU's) are recorded as pending with their points; grading again on a GPU machine into
the same OUT fills them in. Without bubblewrap the grader refuses to run, unless given
--unsafe-no-sandbox (student code then runs as you: for trusted notebooks only).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .assemble import CheckSpec, answer_ids, assemble, check_specs
from .collect import Submission, collect, read_regular, read_roster
from .gradebook import Row, merge, read_rows
from .notebook import lab_id, lab_meta


@dataclass
class Lab:
    id: str
    path: Path
    notebook: object
    sha256: str
    specs: list[CheckSpec]
    answers: list[str]
    check_sources: dict[str, str]


def load_labs(folder: Path) -> dict[str, Lab]:
    """Every instructor notebook in ``folder``, read and hashed once: grading never rereads them."""
    labs = {}
    for path in sorted(folder.glob("*.ipynb")):
        data = read_regular(path)
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        lab = lab_id(nb, path)
        checks = {str(lab_meta(c)["check"]): c.source for c in nb.cells if "check" in lab_meta(c)}
        labs[lab] = Lab(lab, path, nb, hashlib.sha256(data).hexdigest(), check_specs(nb, path.name),
                        answer_ids(nb), checks)
    return labs


class Context:
    """What every submission's grading shares: the device, limits and a pool of sandbox uids
    (one per concurrent job, so process limits and files are per submission)."""

    def __init__(self, args, gpu: bool, protected: list[Path]):
        from . import sandbox

        self.device, self.timeout, self.logs = ("cuda" if gpu else "cpu"), args.timeout, args.out / "logs"
        self.work = Path(tempfile.mkdtemp(prefix="oprt-grade-"))
        self.unsafe = args.unsafe_no_sandbox
        self.timing_lock = threading.Lock()  # performance checks measure one at a time
        self._uids: queue.Queue = queue.Queue()
        root = os.geteuid() == 0
        for i in range(args.jobs):
            self._uids.put(args.sandbox_uid + i if root else None)
        limits = sandbox.Limits(memory_bytes=args.memory_gb << 30)
        self._make = (lambda uid: sandbox.Unsandboxed(gpu)) if self.unsafe else (
            lambda uid: sandbox.Sandbox(uid, gpu, sandbox.course_paths(), protected, limits))

    @contextmanager
    def runner(self):
        uid = self._uids.get()
        try:
            with _uid_lock(uid):
                yield self._make(uid)
        finally:
            self._uids.put(uid)


@contextmanager
def _uid_lock(uid: int | None):
    """Two graders on one machine must not share a sandbox uid at once (the process limit counts
    per uid): a lock file per uid, held while a submission uses it."""
    if uid is None:
        yield
        return
    import fcntl

    fd = os.open(Path(tempfile.gettempdir()) / f"oprt-sandbox-uid-{uid}.lock",
                 os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def grade_submission(sub: Submission, lab: Lab, ctx: Context) -> list[Row]:
    """Every check of one student's lab, and notes; an exception costs this submission only."""
    from .execute import execute
    from .score import dtype_names, plan, run_jobs, verdict

    notes = [Row(sub.student, sub.lab, "notes", "note", 0.0, 0.0, n) for n in sub.notes]
    if sub.notebook is None:
        return [Row(sub.student, sub.lab, s.id, "failed", 0.0, s.points, sub.problem) for s in lab.specs] + notes
    notes += [Row(sub.student, sub.lab, "notes", "note", 0.0, 0.0, n) for n in edited_checks(sub.notebook, lab)]
    logs = ctx.logs / sub.student / sub.lab
    tmp = Path(tempfile.mkdtemp(dir=ctx.work))
    try:
        nb = assemble(lab.notebook, sub.answers, lab.specs, dtype_names(ctx.device), ctx.device == "cuda")
        with ctx.runner() as runner:
            executed = execute(nb, [s.id for s in lab.specs], tmp / "notebook", runner, ctx.timeout, logs / "notebook.log",
                               logs / "executed.ipynb")
            for check, files in executed.artifacts.items():  # long reports go to the log, beside the feedback
                if "report.txt" in files:
                    (logs / f"{check}-report.txt").write_bytes(files["report.txt"])
            jobs, failed = plan(lab.specs, executed, ctx.device)
            run_jobs(list(jobs.values()), ctx.device, runner, tmp / "runs", ctx.timeout, logs / "runner.log",
                     ctx.timing_lock)
        return [verdict(s, jobs.get(s.id), failed.get(s.id), sub.student, sub.lab) for s in lab.specs] + notes
    except Exception as e:  # noqa: BLE001 - the grader's failure on this submission, not the class's
        reason = f"the grader could not grade this submission ({type(e).__name__}: {e}); review it by hand"
        return [Row(sub.student, sub.lab, s.id, "failed", 0.0, s.points, reason) for s in lab.specs] + notes
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def edited_checks(nb, lab: Lab) -> list[str]:
    """Check cells the student changed: graded with the original anyway, but worth saying."""
    notes = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("lab") if isinstance(cell.get("metadata"), dict) else None
        check = meta.get("check") if isinstance(meta, dict) else None
        if isinstance(check, str) and check in lab.check_sources and cell.get("source") != lab.check_sources[check]:
            notes.append(f"check {check} was edited in your notebook; graded with the original")
    return notes


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m operator_runtime_testing.lab.grade", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="one folder or notebook per student")
    parser.add_argument("--labs", type=Path, default=Path("labs"), help="instructor notebooks (default labs/)")
    parser.add_argument("-o", "--out", type=Path, default=Path("_build/grades"), help="gradebook folder")
    parser.add_argument("--roster", type=Path, help="one student per line: missing students get 0")
    parser.add_argument("--lab", action="append", help="grade only this lab id (repeatable)")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2), help="submissions at once")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per cell and per check")
    parser.add_argument("--memory-gb", type=int, default=6, help="memory limit per sandbox (GiB)")
    parser.add_argument("--sandbox-uid", type=int, default=61000, help="first uid for sandboxes (when root)")
    parser.add_argument("--unsafe-no-sandbox", action="store_true",
                        help="run student code as you, without bubblewrap (trusted notebooks only)")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"SUBMISSIONS {args.submissions} is not a folder")
    if not args.labs.is_dir() or not any(args.labs.glob("*.ipynb")):
        parser.error(f"--labs {args.labs} is not a folder of instructor notebooks")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} exists and is not a folder")
    for other, name in ((args.submissions, "SUBMISSIONS"), (args.labs, "--labs")):
        if _inside(args.out.resolve(), other.resolve()) or _inside(other.resolve(), args.out.resolve()):
            parser.error(f"--out must lie outside {name} (and not contain it)")
    if args.roster is not None and not args.roster.is_file():
        parser.error(f"--roster {args.roster} is not a file")
    if args.jobs < 1 or args.timeout <= 0 or args.memory_gb < 1:
        parser.error("--jobs, --timeout and --memory-gb must be positive")
    return args


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        labs = load_labs(args.labs)
        roster = read_roster(args.roster) if args.roster else None
    except (OSError, ValueError) as e:
        print(f"grade: error: {e}", file=sys.stderr)
        return 2
    unknown = sorted(set(args.lab or []) - set(labs))
    if unknown:
        print(f"grade: error: --lab {', '.join(unknown)}: not among {', '.join(labs)}", file=sys.stderr)
        return 2
    labs = {k: v for k, v in labs.items() if not args.lab or k in args.lab}

    import torch
    from tqdm import tqdm

    from . import gradebook, sandbox

    gpu = torch.cuda.is_available()
    if args.unsafe_no_sandbox:
        print("grade: WARNING: --unsafe-no-sandbox: student code runs as you, unconfined", file=sys.stderr)
    else:
        reason = sandbox.available(args.sandbox_uid if os.geteuid() == 0 else None)
        if reason:
            print(f"grade: error: cannot sandbox student code: {reason}. Refusing to grade; pass "
                  "--unsafe-no-sandbox to grade trusted notebooks without isolation.", file=sys.stderr)
            return 2
    try:
        old = read_rows(args.out / "gradebook.csv")
    except ValueError as e:
        print(f"grade: error: {e}", file=sys.stderr)
        return 2
    subs, student_notes = collect(args.submissions, labs, {k: v.answers for k, v in labs.items()}, roster)
    protected = [p.resolve() for p in (args.labs, args.submissions, args.out)]
    if args.roster:
        protected.append(args.roster.resolve())
    ctx = Context(args, gpu, protected)
    start = time.monotonic()
    rows: list[Row] = [Row(s, "-", "notes", "note", 0.0, 0.0, n) for s, ns in student_notes.items() for n in ns]
    try:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        with ThreadPoolExecutor(args.jobs) as pool:  # each job is a sandboxed process: threads only wait
            futures = [pool.submit(grade_submission, s, labs[s.lab], ctx) for s in subs]
            for future in tqdm(as_completed(futures), total=len(futures), desc="grading", unit="notebook",
                               file=sys.stderr):
                rows += future.result()
    finally:
        shutil.rmtree(ctx.work, ignore_errors=True)
    merged = merge(old, rows)
    gradebook.write(args.out, merged, list(labs))
    manifest = {"graded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "device": ctx.device,
                "sandbox": not args.unsafe_no_sandbox, "seconds": round(time.monotonic() - start, 1),
                "labs": {k: {"path": str(v.path), "sha256": v.sha256} for k, v in labs.items()}}
    gradebook.atomic_write(args.out / "manifest.json", json.dumps(manifest, indent=2))
    students = len({s.student for s in subs})
    print(f"graded {sum(s.notebook is not None for s in subs)} notebooks of {students} students in "
          f"{manifest['seconds']} s: {args.out / 'gradebook.csv'}, totals.csv, feedback/, logs/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
