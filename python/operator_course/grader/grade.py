"""Grade a folder of lab submissions.

    python -m operator_course.grader.grade SUBMISSIONS [--labs labs/] [-o _build/grades]
        [--roster roster.txt] [--lab 01_copy ...] [--jobs N] [--timeout SECONDS]
        [--memory-gb G] [--disk-gb G] [--cpu-verdicts count|pending] [--per-process-limits]
        [--secret-shapes FILE]

Student code decides nothing. Each submission is graded in stages:
  1. collect   read every notebook once, as data (submissions.py)
  2. assemble  the instructor's notebook with only the student's answer cells taken, each check
               replaced by a cell that exports what it judges (assemble.py)
  3. execute   run that in the student's own bubblewrap sandbox (sandbox.py, execute.py)
  4. score     run the exported kernels in a second sandbox on inputs drawn here (the lab's shapes
               and the grader's own, LABS/secret_shapes.py) and compare the outputs with
               references computed here (score.py, runner.py)
  5. record    merge into OUT/gradebook.csv, OUT/totals.csv, OUT/feedback/<student>.md, and
               keep each executed notebook and log under OUT/logs/<student>/<lab>/ (gradebook.py)
  6. view      the harness's timings into OUT/timings.json; the public leaderboard
               (OUT/leaderboard/) and the instructor's dashboard (OUT/dashboard/) (class_view.py)
Instructor notebooks are read and hashed once (OUT/manifest.json). Checks this machine cannot
run (a GPU's) are recorded as pending with their points; grading again on a GPU machine into
the same OUT fills them in. Without bubblewrap the grader refuses to run, unless given
--unsafe-no-sandbox (student code then runs as you: for trusted notebooks only).

Limits hold per submission (cgroups.py): every sandbox run is a control group (memory of all its
processes, processes, CPU), and each submission's work dir is a tmpfs of --disk-gb with a bounded
number of files. Where this machine cannot make those (not root, no writable cgroups), the grader
refuses to run unless given --per-process-limits (rlimits only: a submission's children each get
the memory limit). OUT/manifest.json records which limits held.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import secrets
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
from .submissions import Submission, collect, read_regular, read_roster
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
        data = read_regular(path, hard_links=True)  # the instructor's own files
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        lab = lab_id(nb, path)
        checks = {str(lab_meta(c)["check"]): c.source for c in nb.cells if "check" in lab_meta(c)}
        labs[lab] = Lab(lab, path, nb, hashlib.sha256(data).hexdigest(), check_specs(nb, path.name),
                        answer_ids(nb), checks)
    return labs


class Context:
    """What every submission's grading shares: the device, limits and a pool of sandbox uids
    (one per concurrent job, so process limits and files are per submission)."""

    def __init__(self, args, gpu_ids: list[str], protected: list[Path], secret: dict):
        from . import cgroups, gpus, sandbox
        from .score import Verdicts

        self.device, self.timeout, self.logs = ("cuda" if gpu_ids else "cpu"), args.timeout, args.out / "logs"
        self.work = Path(tempfile.mkdtemp(prefix="oprt-grade-"))
        self.unsafe = args.unsafe_no_sandbox
        # a size- and inode-limited tmpfs per submission (root and a sandbox only): what a student
        # writes lands in memory the submission's cgroup pays for, never on the grader's disk
        self.disk = None if (self.unsafe or args.per_process_limits) else \
            cgroups.Disk(args.disk_gb << 30, DISK_INODES)
        # performance checks measure one at a time on each GPU (gpus.py): one lock per GPU
        self.gpu_ids = gpu_ids
        self.timing_locks = {g: threading.Lock() for g in gpu_ids or [None]}
        self.cpu_verdicts = args.cpu_verdicts
        self.verdicts = Verdicts()  # an artifact that recurs across the class runs once (score.Verdicts)
        # the lab inputs' seed, drawn here and never shown to a student (manifest.json keeps it)
        self.seed = args.seed if args.seed is not None else secrets.randbits(62)
        self.secret = secret  # op -> the grader's own shape draw (secret_shapes.py)
        self._uids: queue.Queue = queue.Queue()
        root = os.geteuid() == 0
        for i, gpu in enumerate(gpus.slots(args.jobs, gpu_ids)):  # a job slot: its sandbox uid and its GPU
            self._uids.put((args.sandbox_uid + i if root else None, gpu))
        limits = sandbox.Limits(memory_bytes=args.memory_gb << 30, cgroup=not args.per_process_limits)
        env, readable = _prebuilt_runtime(self.work)
        self._make = (lambda uid, gpu: sandbox.Unsandboxed(gpu or False, env)) if self.unsafe else (
            lambda uid, gpu: sandbox.Sandbox(uid, gpu or False, sandbox.course_paths() + readable, protected, limits,
                                             env))

    @contextmanager
    def workdir(self):
        """A fresh work dir for one submission, on its own limited tmpfs when ``disk`` is set."""
        from . import cgroups

        folder = Path(tempfile.mkdtemp(dir=self.work))
        if self.disk:
            cgroups.mount_workdir(folder, self.disk)
        try:
            yield folder
        finally:
            if self.disk:
                cgroups.unmount_workdir(folder)
            shutil.rmtree(folder, ignore_errors=True)

    @contextmanager
    def runner(self):
        """A free job slot's sandbox (on the slot's GPU) and the timing lock of that GPU."""
        uid, gpu = slot = self._uids.get()
        try:
            with _uid_lock(uid):
                yield self._make(uid, gpu), self.timing_locks[gpu]
        finally:
            self._uids.put(slot)


def _prebuilt_runtime(work: Path) -> tuple[dict[str, str], list[Path]]:
    """(the sandbox's environment, its extra read-only folders) for the CUDA CPU path's runtime,
    compiled here once (trusted, read-only inside) rather than in each submission's notebook and
    runner. Without g++ nothing is built: the checks that need it say so themselves."""
    import subprocess

    from operator_course.cuda import cuda_cpu

    folder = work / "prebuilt"  # compiled here, not taken from a cache others might write
    folder.mkdir()
    os.chmod(folder, 0o755)  # bound read-only at the same path inside (sandbox.py), for the sandbox users
    try:
        path = cuda_cpu.runtime_object(folder)
    except (cuda_cpu.NoCompiler, AssertionError, OSError, subprocess.SubprocessError) as e:
        print(f"note: the CUDA CPU path's runtime was not prebuilt ({str(e)[:200]}); each runner compiles its own",
              file=sys.stderr)
        return {}, []
    os.chmod(path, 0o644)
    return {cuda_cpu.PREBUILT: str(path)}, [folder]


@contextmanager
def _uid_lock(uid: int | None):
    """Two graders on one machine must not share a sandbox uid at once (the process limit counts
    per uid): a lock file per uid, held while a submission uses it."""
    if uid is None:
        yield
        return
    import fcntl

    fd = os.open(_lock_dir() / f"uid-{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _lock_dir() -> Path:
    """Root's own folder for the uid locks (not the shared /tmp, where any local user could create
    and hold a lock file first and stall every grader)."""
    folder = Path("/run/oprt-grade") if Path("/run").is_dir() else Path(tempfile.gettempdir()) / "oprt-grade-root"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if not os.path.isdir(folder) or os.path.islink(folder) or info.st_uid != 0 or info.st_mode & 0o077:
        raise OSError(f"{folder} must be a folder of root's, mode 0700: remove it and grade again")
    return folder


def grade_submission(sub: Submission, lab: Lab, ctx: Context) -> list[Row]:
    """Every check of one student's lab, and notes; an exception costs this submission only."""
    from .execute import execute
    from .score import dtype_names, plan, run_jobs, verdict

    notes = [Row(sub.student, sub.lab, "notes", "note", 0.0, 0.0, n) for n in sub.notes]
    if sub.notebook is None:
        return [Row(sub.student, sub.lab, s.id, "failed", 0.0, s.points, sub.problem) for s in lab.specs] + notes
    notes += [Row(sub.student, sub.lab, "notes", "note", 0.0, 0.0, n) for n in edited_checks(sub.notebook, lab)]
    logs = ctx.logs / sub.student / sub.lab
    answers = answers_hash(sub.answers)
    try:
        with ctx.workdir() as tmp, ctx.runner() as (runner, timing_lock):
            nb = assemble(lab.notebook, sub.answers, lab.specs, dtype_names(ctx.device), ctx.device == "cuda")
            executed = execute(nb, [s.id for s in lab.specs], tmp / "notebook", runner, ctx.timeout,
                               logs / "notebook.log", logs / "executed.ipynb")
            for check, files in executed.artifacts.items():  # long reports go to the log, beside the feedback
                if "report.txt" in files:
                    (logs / f"{check}-report.txt").write_bytes(files["report.txt"])
            jobs, failed = plan(lab.specs, executed, ctx.device, ctx.seed, ctx.secret)
            known = ctx.verdicts.known(jobs, sub.student)  # the same artifact, judged earlier in this run
            if known:
                logs.mkdir(parents=True, exist_ok=True)
                (logs / "reused.log").write_text("".join(f"{c}: the same artifact was run and judged earlier in this "
                                                         "grading run; its verdict is reused\n" for c in known))
            run_jobs([job for check, job in jobs.items() if check not in known], ctx.device, runner, tmp / "runs",
                     ctx.timeout, logs / "runner.log", timing_lock, ctx.seed)
        cpu_verdicts = ctx.cpu_verdicts if ctx.device == "cpu" else "count"
        rows = [known.get(s.id) or verdict(s, jobs.get(s.id), failed.get(s.id), sub.student, sub.lab, cpu_verdicts)
                for s in lab.specs]
        ctx.verdicts.remember({check: job for check, job in jobs.items() if check not in known}, rows)
        notes += [Row(sub.student, sub.lab, "flags", "note", 0.0, 0.0, f"{check}: {job.result['flag']}")
                  for check, job in jobs.items() if job.result and job.result.get("flag")]
    except Exception as e:  # noqa: BLE001 - the grader's failure on this submission, not the class's
        reason = f"the grader could not grade this submission ({type(e).__name__}: {e}); review it by hand"
        rows = [Row(sub.student, sub.lab, s.id, "failed", 0.0, s.points, reason) for s in lab.specs]
    for row in rows:
        row.answers, row.graded_on = answers, ctx.device
    return rows + notes


def answers_hash(answers: dict[str, str]) -> str:
    """What a result is reused for on a regrade: the exact answer cells it judged."""
    text = json.dumps(sorted(answers.items()), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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
    parser = argparse.ArgumentParser(prog="python -m operator_course.grader.grade", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="one folder or notebook per student")
    parser.add_argument("--labs", type=Path, default=Path("labs"), help="instructor notebooks (default labs/)")
    parser.add_argument("-o", "--out", type=Path, default=Path("_build/grades"), help="gradebook folder")
    parser.add_argument("--roster", type=Path, help="one student per line: missing students get 0")
    parser.add_argument("--lab", action="append", help="grade only this lab id (repeatable)")
    parser.add_argument("--jobs", type=int, help="submissions at once (default: what this machine's cores and "
                        "memory hold at --memory-gb each)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per cell and per check")
    parser.add_argument("--memory-gb", type=int, default=6, help="memory limit per submission, all its processes (GiB)")
    parser.add_argument("--disk-gb", type=int, default=2, help="size of each submission's work dir (GiB, a tmpfs)")
    parser.add_argument("--cpu-verdicts", choices=("count", "pending"), default="count",
                        help="kernels a CPU grader judges (CUDA on the emulator, TileLang on the C target): count "
                             "now (default), or stay pending until a GPU pass")
    parser.add_argument("--seed", type=int, help="the inputs' seed (default: a fresh secret one, in manifest.json)")
    parser.add_argument("--secret-shapes", type=Path, help="the grader's own lab shapes (default: LABS/secret_shapes.py; "
                        "a published course keeps its own copy elsewhere)")
    parser.add_argument("--no-secret-shapes", action="store_true",
                        help="grade on the public lab shapes only (a kernel capped just past them passes)")
    parser.add_argument("--gpus", help="GPUs to grade on, comma-separated (default: every one this process sees); "
                        "the jobs spread over them, timed checks one at a time per GPU")
    parser.add_argument("--per-process-limits", action="store_true",
                        help="where cgroups or tmpfs mounts are unavailable: limits per process only")
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
    if args.secret_shapes is not None and not args.secret_shapes.is_file():
        parser.error(f"--secret-shapes {args.secret_shapes} is not a file")
    if args.jobs is None:
        args.jobs = safe_jobs(args.memory_gb)
    if args.jobs < 1 or args.timeout <= 0 or args.memory_gb < 1 or args.disk_gb < 1:
        parser.error("--jobs, --timeout, --memory-gb and --disk-gb must be positive")
    return args


def safe_jobs(memory_gb: int) -> int:
    """Submissions at once that this machine holds: a core each for a notebook and its runner, and
    each submission's memory limit plus its tmpfs work dir's worst case (1 GiB more) within what is
    free, keeping 2 GiB for the grader itself."""
    cores = max(1, (os.cpu_count() or 2) // 2)
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") >> 30
    except (ValueError, OSError):
        free = 8
    return max(1, min(cores, (free - 2) // (memory_gb + 1)))


def limits_here(args) -> dict | str:
    """Which limits hold for each submission here (recorded in the manifest), or why the ones
    that must hold cannot."""
    from . import cgroups, sandbox

    held = {"per_process": ["memory (RLIMIT_DATA)", "cpu seconds", "processes per uid", "file size", "no core"],
            "cgroup": None, "workdir": None}
    if args.unsafe_no_sandbox:
        return {**held, "per_process": []}
    if args.per_process_limits:
        return held
    why = cgroups.available() or cgroups.workdir_available()
    if why:
        return why
    lim = sandbox.Limits()
    held["cgroup"] = {"memory_bytes": args.memory_gb << 30, "processes": lim.processes, "cpus": lim.cpus}
    held["workdir"] = {"tmpfs_bytes": args.disk_gb << 30, "inodes": DISK_INODES}
    return held


DISK_INODES = 20_000  # files in one submission's work dir: a lab run writes a few hundred


def _peak_rss() -> int:
    """The grader's own peak resident memory (not its sandboxes'): what a class costs the grader."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


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
    from . import secret_shapes

    shapes_file = None if args.no_secret_shapes else args.secret_shapes or secret_shapes.default_path(args.labs)
    if shapes_file is None:
        secret = {}
        print("grade: WARNING: --no-secret-shapes: the checks draw only the public lab shapes, which a kernel "
              "capped just past them passes", file=sys.stderr)
    elif not shapes_file.is_file():  # fail closed: grading on public shapes alone is a choice, not an accident
        print(f"grade: error: no {shapes_file}: the grader's own lab shapes (copy labs/secret_shapes.py there, "
              "pass --secret-shapes FILE, or --no-secret-shapes to grade on the public shapes only)", file=sys.stderr)
        return 2
    else:
        try:
            secret = secret_shapes.load(shapes_file, sorted({s.op for lab in labs.values() for s in lab.specs}))
        except ValueError as e:
            print(f"grade: error: {e}", file=sys.stderr)
            return 2

    import torch
    from tqdm import tqdm

    from . import gradebook, sandbox

    from . import gpus

    try:
        gpu_ids = gpus.visible(args.gpus)
    except ValueError as e:
        print(f"grade: error: {e}", file=sys.stderr)
        return 2
    gpu = bool(gpu_ids)
    if args.unsafe_no_sandbox:
        print("grade: WARNING: --unsafe-no-sandbox: student code runs as you, unconfined", file=sys.stderr)
    else:
        reason = sandbox.available(args.sandbox_uid if os.geteuid() == 0 else None)
        if reason:
            print(f"grade: error: cannot sandbox student code: {reason}. Refusing to grade; pass "
                  "--unsafe-no-sandbox to grade trusted notebooks without isolation.", file=sys.stderr)
            return 2
    limits = limits_here(args)
    if isinstance(limits, str):
        print(f"grade: error: cannot limit each submission as a whole: {limits}. Refusing to grade; pass "
              "--per-process-limits to grade with per-process limits only (a submission's processes then "
              "each get --memory-gb, and its files land on this disk).", file=sys.stderr)
        return 2
    if args.per_process_limits:
        print("grade: WARNING: --per-process-limits: memory, processes and disk are limited per process, "
              "not per submission", file=sys.stderr)
    try:
        old = read_rows(args.out / "gradebook.csv")
    except ValueError as e:
        print(f"grade: error: {e}", file=sys.stderr)
        return 2
    subs, student_notes = collect(args.submissions, labs, {k: v.answers for k, v in labs.items()}, roster)
    protected = [p.resolve() for p in (args.labs, args.submissions, args.out)]
    protected += [p.resolve() for p in (args.roster, shapes_file) if p]
    ctx = Context(args, gpu_ids, protected, secret)
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
        if limits.get("cgroup"):
            from . import cgroups

            cgroups.remove_parents()
    merged = merge(old, rows)
    gradebook.write(args.out, merged, list(labs))
    manifest = {"graded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "device": ctx.device,
                "sandbox": not args.unsafe_no_sandbox, "limits": limits, "jobs": args.jobs, "gpus": gpu_ids, "seed": ctx.seed,
                "secret_shapes": ({"path": str(shapes_file), "sha256": hashlib.sha256(shapes_file.read_bytes()).hexdigest()}
                                  if shapes_file else None),
                "cpu_verdicts": args.cpu_verdicts, "seconds": round(time.monotonic() - start, 1),
                "grader_peak_rss_bytes": _peak_rss(),
                "labs": {k: {"path": str(v.path), "sha256": v.sha256} for k, v in labs.items()}}
    gradebook.atomic_write(args.out / "manifest.json", json.dumps(manifest, indent=2))
    from .class_view import after_grading  # OUT/timings.json, the leaderboard and the dashboard

    after_grading(args, merged, rows, manifest["graded_at"])
    students = len({s.student for s in subs})
    print(f"graded {sum(s.notebook is not None for s in subs)} notebooks of {students} students in "
          f"{manifest['seconds']} s: {args.out / 'gradebook.csv'}, totals.csv, feedback/, logs/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
