"""The graded labs, as instructors use them: nbval over the instructor sources, and the release a
student gets (which must fail check by check and hold no solution). Grading: test_grading.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbval", reason="the lab tests need nbval (requirements.txt)")
pytest.importorskip("tilelang", reason="the labs' TileLang parts need tilelang (requirements.txt)")

from operator_course.grader.notebook import checks, instructor_labs, lab_meta, read, solution_lines  # noqa: E402
from operator_course.grader.release import release  # noqa: E402
from operator_runtime_testing.operators import OPERATORS, lab_id  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LABS = ROOT / "labs"


def nbval(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "--nbval", str(path), "-q", "-p", "no:cacheprovider",
                           "-o", "addopts="], capture_output=True, text=True, cwd=ROOT, timeout=1800)


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release")
    release(LABS, out)
    return out


def test_there_is_a_lab_per_operator_in_order():
    assert list(instructor_labs(LABS)) == [lab_id(op) for op in OPERATORS]


def test_instructor_labs_pass_under_nbval():
    result = nbval(LABS)
    assert result.returncode == 0, result.stdout[-4000:]
    assert re.search(r"\b\d+ passed", result.stdout)


def test_release_fails_check_by_check(released):
    result = nbval(released)
    assert result.returncode != 0
    failed = set(re.findall(r"FAILED \S*/(\w+)\.ipynb::Cell (\d+)", result.stdout))
    for lab, path in instructor_labs(released).items():
        code = [c for c in read(path).cells if c.cell_type == "code"]
        assert (lab, "0") not in failed, f"{lab}: the setup cell must run in the release"
        for i, cell in enumerate(code):
            if "check" in lab_meta(cell) and lab_meta(cell).get("needs") != "gpu":
                assert (lab, str(i)) in failed, f"{lab}: check {lab_meta(cell)['check']} passed unsolved"


def test_release_holds_no_solution_and_no_hidden_check(released):
    for lab, path in instructor_labs(LABS).items():
        instructor, student = read(path), read(released / path.name)
        secret = [line for c in instructor.cells for line in solution_lines(c.source)]
        assert secret, f"{lab}: the instructor source marks no solution"
        text = "\n".join(c.source for c in student.cells)
        assert not [s for s in secret if s in text]
        assert "NotImplementedError" in text
        hidden = {m["check"] for _, m in checks(instructor) if m.get("hidden")}
        assert not hidden & {m["check"] for _, m in checks(student)}
