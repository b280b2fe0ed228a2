"""Grading stage 4, score: each check judged by the grader itself. The student's exported
kernels run in a sandboxed runner (runner.py) on inputs drawn here; their outputs come back as
data and are compared here with references computed here. Nothing the student's code printed
or returned decides a point."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import shutil
import sys
import threading
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from operator_runtime.tilelang_support import TL_DTYPES

from .assemble import CheckSpec
from operator_course.lab.cases import DTYPES, output_shape
from .submissions import read_regular
from .execute import Executed, first_error
from .gradebook import PENDING, Row
from operator_course.lab.judge import Case, judge, lab_cases
from operator_course.lab import picture
from operator_course.lab.kernels import GPU_PROGRAM_DIFFERS, GUARD


@dataclass(eq=False)  # one job may serve several checks: identity, not value
class Job:
    spec: CheckSpec
    kind: str  # the runner's: tilelang | cuda | cuda-cpu | cuda-compile | performance
    files: dict[str, bytes]
    cases: list[Case]
    result: dict | None = None
    outputs: list | None = None


def dtype_names(device: str) -> list[str]:
    """TileLang's names of the dtypes a check draws on ``device`` (what export.py saves per; a
    superset for an op with fewer TileLang dtypes there, the record's lab_dtypes)."""
    return [TL_DTYPES[d] for d in DTYPES[device]]


def plan(specs: list[CheckSpec], executed: Executed, device: str, seed: int | None = None,
         secret: dict | None = None) -> tuple[dict[str, Job], dict[str, str]]:
    """(check -> runner job, check -> why it fails before running anything). The inputs: the lab's
    public shapes and the grader's own ones (``secret``: op -> its draw, secret_shapes.load), drawn
    from ``seed`` (None: a fresh one)."""
    seed = torch.seed() if seed is None else seed
    secret = secret or {}
    jobs, failed = {}, {}
    compiles: dict[str, Job] = {}  # source hash -> its cuda-compile job, shared by the checks of one source
    for spec in specs:
        files = executed.artifacts.get(spec.id)
        if files is None:
            why = first_error(executed.report) or executed.problem or "the check's cell never ran"
            failed[spec.id] = f"your notebook did not get as far as this check ({why})"
            continue
        if "error.txt" in files:
            failed[spec.id] = _text(files["error.txt"])  # export.py's words, as the notebook's check says them
            continue
        if spec.kind == "tilelang":
            jobs[spec.id] = Job(spec, "tilelang", files, lab_cases(spec.op, device, _check_seed(seed, spec.id), lang="tilelang", secret=secret.get(spec.op)))
        elif "source.cu" not in files:
            failed[spec.id] = f"`{spec.answer}` was not saved for grading"
        elif device == "cuda":
            kind = "cuda" if spec.kind == "cuda" else "performance"
            jobs[spec.id] = Job(spec, kind, files, lab_cases(spec.op, device, _check_seed(seed, spec.id), secret=secret.get(spec.op)) if kind == "cuda" else [])
        elif spec.kind == "cuda":  # no GPU: the kernel runs on the CPU (cuda_cpu.py), on the GPU's dtypes
            jobs[spec.id] = Job(spec, "cuda-cpu", files, lab_cases(spec.op, "cuda", _check_seed(seed, spec.id), secret=secret.get(spec.op)))
        else:  # no GPU: a timing waits for a GPU pass; compile once per source, unless it fails
            key = hashlib.sha256(files["source.cu"]).hexdigest()
            compiles.setdefault(key, Job(spec, "cuda-compile", files, []))
            jobs[spec.id] = compiles[key]
    return jobs, failed


def _check_seed(seed: int, check: str) -> int:
    """Each check's own draw from the run's seed: a "second draw" check gets other inputs and shapes."""
    return int(hashlib.sha256(f"{seed}:{check}".encode()).hexdigest()[:15], 16)


def run_jobs(jobs: list[Job], device: str, runner, workroot: Path, timeout: float, log: Path, timing_lock,
             seed: int = 0) -> None:
    """Runs every job in a sandboxed runner. One runner process per artifact (a program, a
    source): the checks of one artifact share it, so whatever that artifact's code does when it is
    loaded reaches its own checks only, never another artifact's (a TileLang program's pasted
    constructor once rewrote the CUDA kernel's outputs). Timed jobs run last, one per process,
    holding ``timing_lock``, so that no other submission's kernels share the GPU while one is measured."""
    unique = list(dict.fromkeys(jobs))  # shared jobs once, in order
    groups: dict[str, list[Job]] = {}
    for job in unique:
        if job.kind != "performance":
            groups.setdefault(_artifact(job), []).append(job)
    for i, group in enumerate(groups.values()):
        _run_group(workroot / f"artifact{i}", group, device, runner, timeout, log.with_name(f"{log.stem}-{i}.log"), seed)
    timed = [j for j in unique if j.kind == "performance"]
    if timed:
        with timing_lock:
            for i, job in enumerate(timed):
                _run_group(workroot / f"timed{i}", [job], device, runner, timeout, log.with_name(f"timed-{i}.log"), seed)
    shutil.rmtree(workroot, ignore_errors=True)


def _artifact(job: Job) -> str:
    """Which student artifact a job runs: the hash of its files (a CUDA source, or the programs)."""
    digest = hashlib.sha256()
    for name in sorted(n for n in job.files if n.endswith((".json", ".cu"))):
        digest.update(name.encode() + b"\0" + job.files[name] + b"\0")
    return digest.hexdigest()


class Verdicts:
    """The verdicts this grading run has reached, by what decides them: the check, the kind of run,
    and the bytes of the artifact it ran (its inputs come from the run's seed and the check's id, the
    same for every student). An artifact that recurs across a class (the instructor's code a lab
    hands out whole, an answer shared by two students) runs once, in the sandbox of the first
    submission that holds it; the others get a copy of that verdict. Timed checks are measured for
    every submission."""

    def __init__(self):
        self._rows: dict[tuple, Row] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(check: str, job: Job) -> tuple | None:
        return None if job.kind == "performance" else (check, job.kind, _artifact(job))

    def known(self, jobs: dict[str, Job], student: str) -> dict[str, Row]:
        """check -> this student's copy of a verdict reached earlier, for the jobs that have one."""
        with self._lock:
            found = {check: self._rows.get(self._key(check, job)) for check, job in jobs.items()}
        return {check: replace(r, student=student) for check, r in found.items() if r is not None}

    def remember(self, jobs: dict[str, Job], rows: list[Row]) -> None:
        with self._lock:
            for r in rows:
                job = jobs.get(r.check)
                if job is None or job.result is None or job.result.get("flag") or job.result.get("lost"):
                    continue  # (a check that never ran, a flagged result, a run the sandbox lost)
                if (key := self._key(r.check, job)) is not None:
                    self._rows.setdefault(key, replace(r, student=""))


def _run_group(workdir: Path, group: list[Job], device: str, runner, timeout: float, log: Path, seed: int) -> None:
    """The jobs of one artifact, in a fresh folder and a fresh sandbox; each job's result, and its
    outputs read back as raw bytes of exactly the size the grader expects (no archive to inflate)."""
    spec = {"device": device, "seed": seed, "jobs": []}
    for i, job in enumerate(group):
        folder = workdir / f"job{i}"
        folder.mkdir(parents=True)
        for name, data in job.files.items():
            if name.endswith((".json", ".cu")) and "/" not in name:
                (folder / name).write_bytes(data)
        torch.save([{"dtype": TL_DTYPES[c.dtype], "inputs": c.inputs,
                     "out_shape": list(output_shape(job.spec.op, c.shape))} for c in job.cases], folder / "inputs.pt")
        spec["jobs"].append({"dir": f"job{i}", "kind": job.kind, "op": job.spec.op, "who": job.spec.who})
    (workdir / "jobs.json").write_text(json.dumps(spec))
    outcome = runner.run([sys.executable, "-m", "operator_course.grader.runner"], workdir,
                         timeout * len(group) + 120, log)
    for i, job in enumerate(group):
        folder = workdir / f"job{i}"
        try:
            job.result = json.loads(read_regular(folder / "result.json", 1 << 20))
            assert isinstance(job.result, dict)
        except Exception:  # noqa: BLE001 - no result: the job crashed the runner, or ran out of time
            job.result = None
        if job.result is None:
            if outcome.oom_killed:
                why = "used more memory than the sandbox's limit (all its processes together) and was stopped"
            elif outcome.timed_out:
                why = "ran past the time limit (the process running it was stopped)"
            else:
                why = f"the kernel crashed the process running it (exit code {outcome.returncode})"
            job.result = {"error": why, "lost": True}  # no verdict of the artifact's own: never reused
        elif not job.result.get("error") and job.kind in ("tilelang", "cuda", "cuda-cpu"):
            job.outputs = read_outputs(folder, [(c.dtype, output_shape(job.spec.op, c.shape)) for c in job.cases])


def read_outputs(folder: Path, cases: list[tuple[torch.dtype, tuple]]) -> list[torch.Tensor] | None:
    """The guarded output buffers (kernels.guarded) of ``cases``, from ``folder``/out<i>.bin (runner.py):
    None unless each is a regular file of exactly its size, known before a byte is read."""
    outputs = []
    for i, (dtype, shape) in enumerate(cases):
        size = (math.prod(shape) + 2 * GUARD) * dtype.itemsize
        try:
            data = read_regular(folder / f"out{i}.bin", size)
        except (OSError, ValueError):
            return None
        if len(data) != size:
            return None
        outputs.append(torch.frombuffer(bytearray(data), dtype=torch.uint8).view(dtype))
    return outputs


def verdict(spec: CheckSpec, job: Job | None, failed: str | None, student: str, lab: str,
            cpu_verdicts: str = "count") -> Row:
    """The check's row. ``cpu_verdicts`` "pending" (a CPU grader's): a kernel's result on the CPU (CUDA on
    the emulator, TileLang on the C target) waits, with its points, for a GPU pass (the row's
    graded_on says where a verdict came from)."""
    on_cpu = job is not None and job.kind in ("cuda-cpu", "tilelang")

    def row(status: str, reason: str) -> Row:
        if on_cpu and cpu_verdicts == "pending" and status in ("passed", "failed"):
            status, reason = PENDING, f"on the CPU emulator this {status}: {reason}; it counts after a GPU pass"
        return Row(student, lab, spec.id, status, spec.points if status == "passed" else 0.0, spec.points, reason)

    if failed is not None:
        return row("failed", failed)
    result = job.result or {}
    if result.get("error"):
        flag = f"FLAGGED for the instructor ({result['flag']}): " if result.get("flag") else ""
        return _timed(row("failed", flag + _text(str(result["error"]).encode())), job, spec)
    name = spec.name
    if job.kind == "cuda-compile":
        return row(PENDING, "compiles for sm_90; the kernel runs when a GPU machine grades it")
    if job.kind == "performance":
        ratio, need = result.get("ratio"), float(spec.options.get("fraction", 0.5))
        if not isinstance(ratio, (int, float)):
            return row("failed", "the timing gave no result")
        summary = _text(str(result.get("summary", "")).encode(), 2000)
        return _timed(row("passed" if ratio >= need else "failed",
                          summary + ("" if ratio >= need else f"; this check needs {need:.2f}x torch")), job, spec)
    if job.outputs is None:
        return row("failed", "the kernel's outputs did not come back")
    lang = "cuda" if spec.kind == "cuda" else "tilelang"
    for i, (case, buffer) in enumerate(zip(job.cases, job.outputs)):
        try:
            judge(spec.op, name, case, buffer, lang, job.cases[:i])
        except AssertionError as e:
            failed_row = row("failed", str(e))
            if getattr(e, "mask", None) is not None and e.mask.numel() > 1:  # the notebook's picture, for the feedback
                title = f"{spec.op} ({name}), shape {case}: wrong elements in red"
                failed_row.picture = base64.b64encode(picture.png(e.mask, title)).decode()
            return failed_row
    if result.get("gpu_program_differs"):  # the CPU program passed; the GPU's is another one
        return row(PENDING, f"{spec.op} ({name}): the CPU program passed on {len(job.cases)} inputs, but "
                            f"{GPU_PROGRAM_DIFFERS}")
    return row("passed", f"{spec.op} ({name}): passed on {len(job.cases)} inputs")


def _timed(r: Row, job: Job, spec: CheckSpec) -> Row:
    """A timed job's row keeps the harness's result as data (``row.timing``, not a gradebook column):
    grade.py merges it into OUT/timings.json for the leaderboard (class_view.py, class_data.py)."""
    if job.kind == "performance":
        from .class_data import timing_from_result

        r.timing = timing_from_result(job.result, spec.op)
    return r


def _text(data: bytes, limit: int = 20000) -> str:
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "\n[... cut]"
