"""Grading stage 4, score: each check judged by the grader itself. The student's exported
kernels run in a sandboxed runner (runner.py) on inputs drawn here; their outputs come back as
data and are compared here with references computed here. Nothing the student's code printed
or returned decides a point."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from operator_runtime._internal.tilelang_backend import TL_DTYPES

from .assemble import CheckSpec
from .cases import DTYPES, output_shape
from .collect import read_regular
from .execute import Executed, first_error
from .gradebook import PENDING, Row
from .judge import Case, judge, lab_cases

MAX_OUTPUTS = 512 << 20


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


def plan(specs: list[CheckSpec], executed: Executed, device: str) -> tuple[dict[str, Job], dict[str, str]]:
    """(check -> runner job, check -> why it fails before running anything)."""
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
            jobs[spec.id] = Job(spec, "tilelang", files, lab_cases(spec.op, device, lang="tilelang"))
        elif "source.cu" not in files:
            failed[spec.id] = f"`{spec.answer}` was not saved for grading"
        elif device == "cuda":
            kind = "cuda" if spec.kind == "cuda" else "performance"
            jobs[spec.id] = Job(spec, kind, files, lab_cases(spec.op, device) if kind == "cuda" else [])
        elif spec.kind == "cuda":  # no GPU: the kernel runs on the CPU (cuda_cpu.py), on the GPU's dtypes
            jobs[spec.id] = Job(spec, "cuda-cpu", files, lab_cases(spec.op, "cuda"))
        else:  # no GPU: a timing waits for a GPU pass; compile once per source, unless it fails
            key = hashlib.sha256(files["source.cu"]).hexdigest()
            compiles.setdefault(key, Job(spec, "cuda-compile", files, []))
            jobs[spec.id] = compiles[key]
    return jobs, failed


def run_jobs(jobs: list[Job], device: str, runner, workroot: Path, timeout: float, log: Path, timing_lock) -> None:
    """Runs every job in the sandboxed runner. Timed jobs run last, holding ``timing_lock``, so
    that no other submission's kernels share the GPU while one is measured."""
    unique = list(dict.fromkeys(jobs))  # shared jobs once, in order
    _run(workroot / "checks", [j for j in unique if j.kind != "performance"], device, runner, timeout, log)
    timed = [j for j in unique if j.kind == "performance"]
    if timed:
        with timing_lock:
            _run(workroot / "timed", timed, device, runner, timeout, log.with_name("timed.log"))
    shutil.rmtree(workroot, ignore_errors=True)


def _run(workroot: Path, todo: list[Job], device: str, runner, timeout: float, log: Path) -> None:
    """A job that kills the runner fails alone; the rest run again in a fresh sandbox and a fresh
    folder (nothing of the crashed run is reused)."""
    attempt = 0
    while todo:
        attempt += 1
        workdir = workroot / f"runner-{attempt}"
        workdir.mkdir(parents=True)
        spec = {"device": device, "jobs": []}
        for i, job in enumerate(todo):
            folder = workdir / f"job{i}"
            folder.mkdir()
            for name, data in job.files.items():
                if name.endswith((".json", ".cu")) and "/" not in name:
                    (folder / name).write_bytes(data)
            torch.save([{"dtype": TL_DTYPES[c.dtype], "inputs": c.inputs,
                         "out_shape": list(output_shape(job.spec.op, c.shape))} for c in job.cases], folder / "inputs.pt")
            spec["jobs"].append({"dir": f"job{i}", "kind": job.kind, "op": job.spec.op, "who": job.spec.who})
        (workdir / "jobs.json").write_text(json.dumps(spec))
        outcome = runner.run([sys.executable, "-m", "operator_runtime_testing.lab.runner"], workdir,
                             timeout * len(todo) + 120, log.with_name(f"{log.stem}-{attempt}.log"))
        remaining = []
        for i, job in enumerate(todo):
            folder = workdir / f"job{i}"
            try:
                job.result = json.loads(read_regular(folder / "result.json", 1 << 20))
                assert isinstance(job.result, dict)
            except Exception:  # noqa: BLE001 - no result: this job crashed the runner, or never started
                job.result = None
            if job.result is None and _started(folder) and not outcome.timed_out:
                job.result = {"error": f"the kernel crashed the process running it (exit code {outcome.returncode})"}
            elif job.result is None and outcome.timed_out:
                job.result = {"error": "ran past the time limit (the process running it was stopped)"}
            if job.result is None:
                remaining.append(job)
            elif not job.result.get("error") and job.kind in ("tilelang", "cuda", "cuda-cpu"):
                job.outputs = _outputs(folder, len(job.cases))
        if remaining and len(remaining) == len(todo):  # no progress: the first job takes the blame
            remaining[0].result = {"error": f"the kernel stopped the process running it (exit code {outcome.returncode})"}
            remaining = remaining[1:]
        todo = remaining


def _started(folder: Path) -> bool:
    return (folder / "started").exists() or (folder / "started").is_symlink()


def _outputs(folder: Path, count: int) -> list | None:
    try:
        outputs = torch.load(io.BytesIO(read_regular(folder / "outputs.pt", MAX_OUTPUTS)), weights_only=True)
    except Exception:  # noqa: BLE001 - unreadable outputs are no outputs
        return None
    if not isinstance(outputs, list) or len(outputs) != count:
        return None
    return outputs


def verdict(spec: CheckSpec, job: Job | None, failed: str | None, student: str, lab: str) -> Row:
    def row(status: str, reason: str) -> Row:
        return Row(student, lab, spec.id, status, spec.points if status == "passed" else 0.0, spec.points, reason)

    if failed is not None:
        return row("failed", failed)
    result = job.result or {}
    if result.get("error"):
        return row("failed", _text(str(result["error"]).encode()))
    name = spec.name
    if job.kind == "cuda-compile":
        return row(PENDING, "compiles for sm_90; the kernel runs when a GPU machine grades it")
    if job.kind == "performance":
        ratio, need = result.get("ratio"), float(spec.options.get("fraction", 0.5))
        if not isinstance(ratio, (int, float)):
            return row("failed", "the timing gave no result")
        summary = _text(str(result.get("summary", "")).encode(), 2000)
        return row("passed" if ratio >= need else "failed",
                   summary + ("" if ratio >= need else f"; this check needs {need:.2f}x torch"))
    if job.outputs is None:
        return row("failed", "the kernel's outputs did not come back")
    lang = "cuda" if spec.kind == "cuda" else "tilelang"
    for i, (case, buffer) in enumerate(zip(job.cases, job.outputs)):
        try:
            judge(spec.op, name, case, buffer, lang, job.cases[:i])
        except AssertionError as e:
            return row("failed", str(e))
    return row("passed", f"{spec.op} ({name}): passed on {len(job.cases)} inputs")


def _text(data: bytes, limit: int = 20000) -> str:
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "\n[... cut]"
