"""One grading worker per GPU (issue 32), with fake device lists: the job slots spread over the
GPUs, each sandbox sees only its own, and a timed check takes its GPU's lock, not the host's.
The real run (a class graded on every GPU of a host against one GPU, the gradebooks compared)
needs two GPUs and skips here with the reason."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from operator_course.grader import gpus
from operator_course.grader.grade import Context
from operator_course.grader.sandbox import Unsandboxed, sandbox_env


def test_visible_gpus_from_the_option_the_environment_or_the_count(monkeypatch):
    assert gpus.visible("2, 3") == ["2", "3"]
    with pytest.raises(ValueError, match="name each GPU once"):
        gpus.visible("1,1")
    with pytest.raises(ValueError, match="name each GPU once"):
        gpus.visible(" , ")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert gpus.visible(None, count=3) == ["0", "1", "2"]
    assert gpus.visible(None, count=0) == []
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")
    assert gpus.visible(None, count=2) == ["5", "7"]  # the ids the grader's own CUDA was given
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpus.visible(None, count=0) == []


def test_slots_take_the_gpus_in_turn():
    assert gpus.slots(5, ["0", "1"]) == ["0", "1", "0", "1", "0"]
    assert gpus.slots(1, ["0", "1", "2"]) == ["0"]
    assert gpus.slots(3, []) == [None, None, None]


def test_a_sandbox_sees_only_its_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    assert sandbox_env("2")["CUDA_VISIBLE_DEVICES"] == "2"
    assert sandbox_env(False)["CUDA_VISIBLE_DEVICES"] == ""
    assert sandbox_env(True)["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"  # the grader's own view, as before


def _context(tmp_path: Path, jobs: int, gpu_ids: list[str]) -> Context:
    args = SimpleNamespace(timeout=10.0, out=tmp_path / "grades", unsafe_no_sandbox=True, per_process_limits=True,
                           disk_gb=1, cpu_verdicts="count", seed=1, jobs=jobs, sandbox_uid=61000, memory_gb=1)
    return Context(args, gpu_ids, [], {})


def _runners(ctx: Context, n: int) -> list[tuple]:
    """n runners held at once (each job slot once), as n concurrent submissions hold them."""
    held, entered = [], []
    for _ in range(n):
        cm = ctx.runner()
        held.append(cm)
        entered.append(cm.__enter__())
    for cm in held:
        cm.__exit__(None, None, None)
    return entered


def test_jobs_spread_over_the_gpus_and_timings_lock_per_gpu(tmp_path):
    ctx = _context(tmp_path, jobs=4, gpu_ids=["0", "1"])
    try:
        got = _runners(ctx, 4)
        assert all(isinstance(r, Unsandboxed) for r, _ in got)
        assert sorted(r.gpu for r, _ in got) == ["0", "0", "1", "1"]
        locks = {r.gpu: set() for r, _ in got}
        for r, lock in got:
            locks[r.gpu].add(id(lock))
        assert all(len(ids) == 1 for ids in locks.values()), "one timing lock per GPU"
        assert locks["0"] != locks["1"], "GPUs 0 and 1 time at once"
        # a timing on GPU 0 does not wait for one on GPU 1
        one = ctx.timing_locks["1"]
        with one:
            other = threading.Thread(target=lambda: ctx.timing_locks["0"].acquire(timeout=2) and ctx.timing_locks["0"].release())
            other.start()
            other.join(3)
            assert not other.is_alive()
            assert not ctx.timing_locks["1"].acquire(timeout=0.05), "two timings on one GPU never overlap"
        assert ctx.device == "cuda"
    finally:
        shutil.rmtree(ctx.work, ignore_errors=True)


def test_a_cpu_grader_has_no_gpu_and_one_lock(tmp_path):
    ctx = _context(tmp_path, jobs=2, gpu_ids=[])
    try:
        got = _runners(ctx, 2)
        assert [r.gpu for r, _ in got] == [False, False]
        assert got[0][1] is got[1][1]
        assert ctx.device == "cpu"
    finally:
        shutil.rmtree(ctx.work, ignore_errors=True)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="grading on every GPU of a host needs two GPUs or more "
                    "(issue 32: no multi-GPU machine was lent; the gradebooks of --gpus 0 and --gpus 0,1 are compared)")
def test_a_class_graded_on_every_gpu_scores_as_on_one(tmp_path):
    from operator_course.grader import grade
    from operator_course.grader.gradebook import read_rows

    root = Path(__file__).resolve().parents[2]
    subs = tmp_path / "subs"
    for student in ("ada", "bob", "cy", "dee"):
        (subs / student).mkdir(parents=True)
        shutil.copy(root / "labs" / "01_copy.ipynb", subs / student / "01_copy.ipynb")
    points = {}
    for spec in ("0", ",".join(str(i) for i in range(torch.cuda.device_count()))):
        out = tmp_path / f"grades-{spec.replace(',', '-')}"
        assert grade.main([str(subs), "--labs", str(root / "labs"), "-o", str(out), "--lab", "01_copy", "--gpus", spec,
                           "--jobs", "4", "--seed", "7", "--unsafe-no-sandbox", "--per-process-limits"]) == 0
        points[spec] = {(r.student, r.check): r.points for r in read_rows(out / "gradebook.csv")}
    one, every = points.values()
    assert one == every
