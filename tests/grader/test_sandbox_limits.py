"""Limits per submission, not per process (grader/cgroups.py, grader/sandbox.py): a control group counts
every process of a sandbox run together, and a submission's work dir is a tmpfs that caps bytes
and files. Also the raw outputs a runner hands back (score.read_outputs): sized before a byte is
read, so nothing can inflate in the grader. Needs root (cgroups, mount); skips otherwise."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import pytest
import torch

from operator_course.grader import cgroups, grade, sandbox
from operator_course.lab.kernels import GUARD
from operator_course.grader.score import read_outputs


def _needs(reason_of):
    reason = reason_of()
    if reason:
        pytest.skip(reason)


def _sandbox(memory: int) -> sandbox.Sandbox:
    if sandbox.bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    return sandbox.Sandbox(61090, False, sandbox.course_paths(), [], sandbox.Limits(memory_bytes=memory))


FORKED = """
import os, time
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        block = bytearray(300 << 20)
        block[::4096] = b"\\1" * len(range(0, len(block), 4096))
        time.sleep(20)
        os._exit(0)
    kids.append(pid)
if all(os.waitpid(pid, 0)[1] == 0 for pid in kids):
    print("all children held their memory")
"""


def test_forked_children_share_one_memory_limit(tmp_path):
    """Three children of 300 MiB under a 512 MiB limit: each is within RLIMIT_DATA, together they are not."""
    _needs(cgroups.available)
    box = _sandbox(512 << 20)
    outcome = box.run([sys.executable, "-c", FORKED], tmp_path / "work", 60, tmp_path / "log")
    log = (tmp_path / "log").read_text()
    assert "all children held their memory" not in log, log[-2000:]
    assert outcome.oom_killed and outcome.peak_bytes <= 512 << 20, (outcome, log[-1000:])


def test_a_daemon_that_left_the_session_dies_with_the_run(tmp_path):
    _needs(cgroups.available)
    box = _sandbox(1 << 30)
    script = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(300)\nprint('parent done')"
    box.run([sys.executable, "-c", script], tmp_path / "work", 60, tmp_path / "log")
    assert "parent done" in (tmp_path / "log").read_text()
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _uid(p) == 61090]


def _uid(pid: str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def test_the_work_dir_caps_bytes_and_files(tmp_path):
    _needs(cgroups.workdir_available)
    folder = tmp_path / "work"
    cgroups.mount_workdir(folder, cgroups.Disk(8 << 20, 64))
    try:
        with pytest.raises(OSError):
            (folder / "big").write_bytes(b"\1" * (9 << 20))
        (folder / "big").unlink()
        with pytest.raises(OSError):
            for i in range(100):
                (folder / f"f{i}").write_text("")
    finally:
        cgroups.unmount_workdir(folder)
    assert not any(folder.iterdir()), "the tmpfs's files must go with it"


def test_asking_whether_cgroups_work_leaves_no_group_behind():
    """cgroups.available() makes a probe group to find out; its parent (oprt-grade-<pid>) stayed,
    empty, in every hierarchy: one more per test run and per grader that only asked."""
    _needs(cgroups.available)
    assert not [b / cgroups.PARENT for b in cgroups.bases() if (b / cgroups.PARENT).exists()]


def test_the_default_jobs_fit_this_machine():
    jobs = grade.safe_jobs(6)
    assert 1 <= jobs <= max(1, (os.cpu_count() or 2) // 2)
    assert grade.safe_jobs(10_000) == 1, "a limit larger than the machine still grades, one at a time"


CASES = [(torch.float32, (7,)), (torch.bfloat16, (3, 5)), (torch.float16, (0,))]


def _write(folder: Path) -> list[torch.Tensor]:
    folder.mkdir()
    buffers = [torch.randn(math.prod(s) + 2 * GUARD).to(d) for d, s in CASES]
    for i, b in enumerate(buffers):
        (folder / f"out{i}.bin").write_bytes(b.view(torch.uint8).numpy().tobytes())
    return buffers


def test_outputs_come_back_at_exactly_their_size(tmp_path):
    buffers = _write(tmp_path / "ok")
    got = read_outputs(tmp_path / "ok", CASES)
    assert all(torch.equal(a, b) for a, b in zip(got, buffers))
    _write(tmp_path / "long")
    with open(tmp_path / "long" / "out1.bin", "ab") as f:
        f.write(b"\0")
    assert read_outputs(tmp_path / "long", CASES) is None, "one byte more is not these outputs"
    _write(tmp_path / "short")
    (tmp_path / "short" / "out2.bin").write_bytes((tmp_path / "short" / "out2.bin").read_bytes()[:-2])
    assert read_outputs(tmp_path / "short", CASES) is None
    _write(tmp_path / "link")
    os.replace(tmp_path / "link" / "out0.bin", tmp_path / "elsewhere.bin")
    os.symlink(tmp_path / "elsewhere.bin", tmp_path / "link" / "out0.bin")
    assert read_outputs(tmp_path / "link", CASES) is None, "a link is not a result"
