"""The CUDA CPU path's runtime object, compiled once by the grader (grade._prebuilt_runtime) and
shown read-only to every sandbox, instead of compiled in each submission's runner (4 s each): a
sandboxed process finds it through $OPRT_CUDA_CPU_RUNTIME, cannot write it, and a file that is not
this runtime's is never taken for it."""

from __future__ import annotations

import shutil
import sys

import pytest

from operator_course.cuda import cuda_cpu
from operator_course.grader import grade, sandbox

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the CPU path builds kernels with g++")

PROBE = """
import os
from pathlib import Path
from operator_course.cuda import cuda_cpu
path = cuda_cpu.runtime_object()
print("runtime:", path)
try:
    Path(os.environ["OPRT_CUDA_CPU_RUNTIME"]).write_bytes(b"poisoned")
    print("wrote the shared runtime")
except OSError as e:
    print("read-only:", type(e).__name__)
"""


def test_a_sandbox_links_the_graders_runtime_and_cannot_change_it(tmp_path):
    if sandbox.bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    work = tmp_path / "grading"
    work.mkdir()
    env, readable = grade._prebuilt_runtime(work)
    prebuilt = env[cuda_cpu.PREBUILT]
    before = open(prebuilt, "rb").read()
    box = sandbox.Sandbox(61095, False, sandbox.course_paths() + readable, [], sandbox.Limits(cgroup=False), env)
    outcome = box.run([sys.executable, "-c", PROBE], tmp_path / "student", 120, tmp_path / "log")
    log = (tmp_path / "log").read_text()
    assert outcome.returncode == 0, log[-2000:]
    assert f"runtime: {prebuilt}\n" in log, log  # not compiled again in the sandbox's HOME
    assert "read-only:" in log and "wrote the shared runtime" not in log, log
    assert open(prebuilt, "rb").read() == before


def test_only_this_runtimes_object_is_taken(tmp_path, monkeypatch):
    stranger = tmp_path / "cuda-cpu-runtime-0000000000000000.o"  # another runtime's (or anybody's) object
    stranger.write_bytes(b"not ours")
    monkeypatch.setenv(cuda_cpu.PREBUILT, str(stranger))
    assert cuda_cpu.runtime_object() != stranger
    ours = cuda_cpu.runtime_object().name
    assert ours.startswith("cuda-cpu-runtime-") and ours != stranger.name
