"""The timing a cheater cannot fool (verified_timing.py through the grader): lab 1's performance
class (tests/labs/performance/: an honest fast and an honest slow kernel, and every timing hack
a lab answer can hold) graded by the real, sandboxed grader. On a GPU each must score what its
real kernel deserves and no reported figure may exceed the device's measured ceiling; on a CPU
grader the timings stay pending with their points, and the rest is judged as usual: there only
CPU_CLASS is graded (every answer's CPU-side checks are lab 1's ordinary ones, which the control
and hostile classes of test_grading.py cover; the timing hacks show only on a GPU)."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("tilelang", reason="the labs' TileLang parts need tilelang (requirements.txt)")

from labs.submissions import expected, write_class  # noqa: E402
from operator_course.grader import cgroups  # noqa: E402
from operator_runtime_testing.verified_timing import PHYSICAL_MARGIN  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LABS = ROOT / "labs"
GPU = torch.cuda.is_available()
JOBS = max(2, min(8, (os.cpu_count() or 2) // 2))
CPU_CLASS = ("honest_fast", "perf_pointer_cache", "perf_torch_leftover")  # an honest answer and two hacks
LIMITS = ["--per-process-limits"] if (cgroups.available() or cgroups.workdir_available()) else []


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if shutil.which("bwrap") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must grade in the sandbox: bubblewrap is missing (.ci/run installs it)")
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    tmp = tmp_path_factory.mktemp("performance")
    specs = write_class(LABS / "01_copy.ipynb", tmp / "class", "performance", () if GPU else CPU_CLASS)
    out = tmp / "grades"
    result = subprocess.run([sys.executable, "-m", "operator_course.grader.grade", str(tmp / "class"),
                             "--labs", str(LABS), "--lab", "01_copy", "-o", str(out), "--jobs", str(JOBS),
                             "--timeout", "120", "--sandbox-uid", "61200", *LIMITS],
                            capture_output=True, text=True, cwd=tmp, timeout=3000)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(out / "gradebook.csv", newline="") as f:
        rows = {(r["student"], r["check"]): r for r in csv.DictReader(f)}
    print("\n".join(f"{s:24} {c:20} {r['status']:8} {r['points']:>4}/{r['max']:<4} {r['reason'][:150]!r}"
                    for (s, c), r in sorted(rows.items()) if c == "copy-performance"))
    return specs, rows


def test_each_answer_scores_what_its_kernel_deserves(graded):
    specs, rows, wrong = *graded, []
    for student, spec in specs.items():
        for check in spec["expect"]:
            status, row = expected(spec, check, GPU), rows.get((student, check))
            deserved = float(row["max"]) if row and status == "passed" else 0.0
            if row is None or row["status"] != status or float(row["points"]) != deserved:
                wrong.append(f"{student} {check}: expected {status}, got {row and (row['status'], row['reason'][:300])}")
    assert not wrong, "\n".join(wrong)


RATE = re.compile(r"(\d+(?:\.\d+)?) (GB/s|TFLOP/s) vs torch (\d+(?:\.\d+)?)")
CEILING = re.compile(r"ceiling (\d+(?:\.\d+)?) (GB/s|TFLOP/s)")


def test_no_reported_figure_exceeds_the_ceiling(graded):
    _, rows = graded
    timed = [r for (s, c), r in rows.items() if c == "copy-performance" and r["status"] == "passed"]
    if not GPU:
        assert not timed, "a CPU grader times nothing"
        pytest.skip("timings are judged on a GPU grader")
    assert timed, "the honest fast kernel must be timed"
    for row in timed:
        ceiling = float(CEILING.search(row["reason"])[1])
        for ours, _, theirs in RATE.findall(row["reason"]):
            assert float(ours) <= PHYSICAL_MARGIN * ceiling and float(theirs) <= PHYSICAL_MARGIN * ceiling, row


def test_cheats_that_fail_while_timed_are_flagged(graded):
    _, rows = graded
    if not GPU:
        pytest.skip("timings are judged on a GPU grader")
    flags = " ".join(r["reason"] for (s, c), r in rows.items() if c == "flags")
    assert "copy-performance" in flags, "a timed call that computed a wrong answer is flagged for the instructor"
