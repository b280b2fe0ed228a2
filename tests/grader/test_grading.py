"""Grading a class an instructor can trust: a control class (correct, wrong, unsolved and
honest-but-unusual answers), a hostile class (tests/labs/hostile/: each file an attack) and
malformed inputs, graded together in one run of the real grader, sandboxed, on lab 1.

Every row is asserted: each submission scores what the kernel it submitted deserves; files
outside the submissions' work dirs are byte-identical afterwards; no process of a submission
outlives the run; the grader survives every input."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

pytest.importorskip("tilelang", reason="the labs' TileLang parts need tilelang (requirements.txt)")

from labs.submissions import expected, malformed_class, write_class  # noqa: E402
from operator_course.grader import cgroups, gradebook  # noqa: E402
from operator_course.grader.gradebook import Row  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LABS = ROOT / "labs"
PACKAGE = ROOT / "python"
UID = 61000
JOBS = max(2, min(8, (os.cpu_count() or 2) // 2))  # 2 on CI; 8 on the GPU machine's 16 cores
GPU = torch.cuda.is_available()  # a CPU grader runs CUDA checks on the CPU; only timings stay pending
GRADE = [sys.executable, "-m", "operator_course.grader.grade"]
# cgroups and tmpfs work dirs need root and writable cgroups; where this machine has neither the
# grader refuses unless told --per-process-limits (and test_limits_hold_per_submission skips)
NO_CGROUPS = cgroups.available() or cgroups.workdir_available()
LIMITS = ["--per-process-limits"] if NO_CGROUPS else []
# The grader's own peak while the class (memory hogs, forked children, a disk filler) is graded: it
# now depends on the grader's own shapes (the secret ones, judged in float64, two at a time), not on
# anything a student writes (a zip bomb of outputs once took it from 411 MB to 6.7 GB). Measured:
# under 3 GiB here, 6.6 GiB in a clean-clone CI run (2026-12-04): the bound keeps a margin over that
# (what grows it is still to be found: issue 25's note).
GRADER_RSS_BOUND = 10 << 30


def _needs_sandbox():
    if shutil.which("bwrap") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must grade in the sandbox: bubblewrap is missing (.ci/run installs it)")
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap): grading refuses to run without it")


def tree_hash(folder: Path) -> dict[str, str]:
    """path -> sha256 of every file (links by target), skipping caches Python writes itself."""
    out = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".ipynb_checkpoints")]
        for name in files:
            path = Path(root) / name
            if path.is_symlink():
                out[str(path)] = "link:" + os.readlink(path)
            elif path.is_file():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[str(path)] = "special"
    return out


def sandbox_processes() -> list[str]:
    ps = subprocess.run(["ps", "-eo", "uid=,pid=,args="], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if UID <= int(line.split()[0]) < UID + JOBS]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    _needs_sandbox()
    tmp = tmp_path_factory.mktemp("grading")
    secret = tmp / "secret.txt"
    secret.write_text("the instructor's secret\n")
    specs = {**write_class(LABS / "01_copy.ipynb", tmp / "class", "control"),
             **write_class(LABS / "01_copy.ipynb", tmp / "class", "hostile")}
    malformed = malformed_class(LABS / "01_copy.ipynb", tmp / "class", secret)
    out = tmp / "grades"
    before = {"labs": tree_hash(LABS), "package": tree_hash(PACKAGE), "class": tree_hash(tmp / "class"),
              "secret": tree_hash(tmp / "secret.txt").get(str(secret))}
    roster = tmp / "roster.txt"
    roster.write_text("student\n" + "\n".join([*specs, *malformed, "absent"]) + "\n")
    result = subprocess.run([*GRADE, str(tmp / "class"), "--labs", str(LABS), "--lab", "01_copy", "-o", str(out),
                             "--jobs", str(JOBS), "--timeout", "60", "--roster", str(roster),
                             "--sandbox-uid", str(UID), *LIMITS], capture_output=True, text=True, cwd=tmp, timeout=3000)
    book = (out / "gradebook.csv").read_bytes() if result.returncode == 0 else b""
    time.sleep(3)  # a detached daemon would strike now, after the grader has gone
    after = {"labs": tree_hash(LABS), "package": tree_hash(PACKAGE), "class": tree_hash(tmp / "class"),
             "secret": hashlib.sha256(secret.read_bytes()).hexdigest()}
    before["secret"] = hashlib.sha256(b"the instructor's secret\n").hexdigest()
    return {"result": result, "out": out, "specs": specs, "malformed": malformed, "before": before,
            "after": after, "book": book, "processes": sandbox_processes(), "tmp": tmp}


def rows(graded) -> dict[tuple[str, str], dict]:
    with open(graded["out"] / "gradebook.csv", newline="") as f:
        return {(r["student"], r["check"]): r for r in csv.DictReader(f)}


def test_the_grader_survives_the_class(graded):
    assert graded["result"].returncode == 0, graded["result"].stderr[-3000:]
    assert "grading" in graded["result"].stderr, "expected a progress bar"


@pytest.mark.parametrize("kind", ["control", "hostile"])
def test_every_submission_scores_what_its_kernel_deserves(graded, kind):
    book, wrong = rows(graded), []
    for student, spec in graded["specs"].items():
        if (Path(__file__).parents[1] / "labs" / kind / f"{student}.py").exists():
            for check in spec["expect"]:
                status = expected(spec, check, GPU)
                row = book.get((student, check))
                points = float(row["points"]) if row else None
                deserved = float(row["max"]) if row and status == "passed" else 0.0
                if row is None or row["status"] != status or points != deserved:
                    wrong.append(f"{student} {check}: expected {status}, got "
                                 f"{row and (row['status'], row['points'], row['reason'][:300])}")
    assert not wrong, "\n".join(wrong)


MISSING_MODULE = re.compile(r"No module named '(operator_[\w.]+)'")


def test_every_attack_reaches_the_course_it_attacks(graded):
    """A submission that dies importing a course module that does not exist (a name left stale by
    a rename) fails for the wrong reason: its attack never ran. A module that exists but was made
    unimportable by the submission itself (a mocked package) is the attack working."""
    def exists(module: str) -> bool:
        base = ROOT / "python" / module.replace(".", "/")
        return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()

    executed = sorted((graded["out"] / "logs").glob("*/*/executed.ipynb"))
    assert executed, "the grader kept no executed notebook"
    stale = sorted({f"{path.parts[-3]}: imports {name}" for path in executed
                    for name in MISSING_MODULE.findall(path.read_text(errors="replace")) if not exists(name)})
    assert not stale, "these submissions import course modules that do not exist:\n" + "\n".join(stale)


def test_malformed_inputs_each_get_a_row_with_the_reason(graded):
    book = rows(graded)
    for student, word in graded["malformed"].items():
        mine = {check: r for (s, check), r in book.items() if s == student}
        assert "copy-tilelang" in mine, f"{student} is missing from the gradebook"
        if word == "passed":
            assert mine["copy-tilelang"]["status"] == "passed", (student, mine["copy-tilelang"]["reason"])
        else:
            reasons = " ".join(r["reason"] for r in mine.values())
            assert word in reasons, (student, reasons)
            assert mine["copy-tilelang"]["points"] == "0.0"
    assert "secret" not in (graded["out"] / "gradebook.csv").read_text()


def test_no_gradebook_cell_is_a_formula(graded):
    with open(graded["out"] / "gradebook.csv", newline="") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    assert not [c for c in cells if c.startswith(gradebook.FORMULA_STARTS)], "a cell a spreadsheet would run"
    assert any(c.startswith("'=HYPERLINK") for c in cells), "the planted formula should be there, as text"


def test_limits_hold_per_submission(graded):
    """The disk filler got no further than its tmpfs allows; the forked children did not hold
    more than the submission's memory; the grader itself stayed small."""
    manifest = json.loads((graded["out"] / "manifest.json").read_text())
    if NO_CGROUPS:
        assert manifest["limits"]["cgroup"] is None
        pytest.skip(f"graded with --per-process-limits: {NO_CGROUPS}")
    assert manifest["limits"]["cgroup"] and manifest["limits"]["workdir"], manifest["limits"]
    executed = (graded["out"] / "logs" / "disk_filler" / "01_copy" / "executed.ipynb").read_text()
    found = re.search(r"DISK_FILLER wrote (\d+) bytes and (\d+) empty files", executed)
    assert found, "the disk filler's report is missing from its executed notebook"
    assert int(found[1]) <= manifest["limits"]["workdir"]["tmpfs_bytes"]
    assert int(found[2]) <= manifest["limits"]["workdir"]["inodes"]
    assert manifest["grader_peak_rss_bytes"] < GRADER_RSS_BOUND, manifest["grader_peak_rss_bytes"]


def test_a_missing_student_on_the_roster_gets_zero(graded):
    book = rows(graded)
    assert book[("absent", "copy-tilelang")]["status"] == "failed"
    assert book[("absent", "copy-tilelang")]["max"] == "3.0"
    totals = {r["student"]: r for r in csv.DictReader(open(graded["out"] / "totals.csv"))}
    assert totals["absent"]["total"] == "0" and totals["absent"]["max"] == "9"
    assert totals["solved"]["total"] == ("9" if GPU else "7") and totals["solved"]["pending"] == ("0" if GPU else "2")


def test_nothing_outside_the_work_dirs_changed(graded):
    for what in ("labs", "package", "class", "secret"):
        assert graded["before"][what] == graded["after"][what], f"{what} changed during grading"
    assert (graded["out"] / "gradebook.csv").read_bytes() == graded["book"], "the gradebook changed after the run"
    expected = {"gradebook.csv", "totals.csv", "manifest.json", "feedback", "logs",
                "timings.json", "leaderboard", "dashboard", ".pseudonym-key"}  # + the class view (class_view.py)
    assert expected <= {p.name for p in graded["out"].iterdir()} <= expected | {"similarity.json"}
    names = set(graded["specs"]) | set(graded["malformed"]) | {"absent"}
    assert {p.stem for p in (graded["out"] / "feedback").iterdir()} <= names


def test_no_process_of_a_submission_outlives_it(graded):
    assert graded["processes"] == []


def test_feedback_holds_full_reasons_and_the_executed_notebook_is_kept(graded):
    feedback = (graded["out"] / "feedback" / "stub.md").read_text()
    assert "NotImplementedError" in feedback and "Total: 0 / 9" in feedback
    assert (graded["out"] / "logs" / "solved" / "01_copy" / "executed.ipynb").is_file()


def test_regrading_one_student_merges(graded, tmp_path):
    out = tmp_path / "grades"
    shutil.copytree(graded["out"], out)
    one = tmp_path / "one"
    shutil.copytree(graded["tmp"] / "class" / "solved", one / "solved")
    result = subprocess.run([*GRADE, str(one), "--labs", str(LABS), "--lab", "01_copy", "-o", str(out),
                             "--jobs", "1", "--timeout", "60", "--sandbox-uid", str(UID), *LIMITS],
                            capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    before, after = rows(graded), rows({"out": out})
    assert set(before) == set(after), "regrading one student must keep everyone else's rows"
    assert after[("empty_folder", "copy-tilelang")] == before[("empty_folder", "copy-tilelang")]
    assert after[("solved", "copy-tilelang")]["status"] == "passed"


def test_merge_reuses_a_result_only_for_the_same_answers():
    def row(check, status, points, answers="a1", on="cpu"):
        return Row("ann", "01_copy", check, status, points, 3.0, status, answers, on)

    cpu = [row("copy-tilelang", "passed", 3.0), row("copy-cuda", "pending", 0.0)]
    gpu = [row("copy-tilelang", "passed", 3.0, on="cuda"), row("copy-cuda", "failed", 0.0, on="cuda")]
    assert gradebook.merge(cpu, gpu) == gpu, "a GPU pass fills what was pending"
    assert gradebook.merge(gpu, cpu)[1].status == "failed", "a CPU pass keeps the GPU's real result"
    assert gradebook.merge(gpu, cpu)[0].graded_on == "cuda", "a GPU verdict outranks a CPU one for the same answers"
    other_answers = [row("copy-tilelang", "passed", 3.0, "b2"), row("copy-cuda", "pending", 0.0, "b2")]
    merged = gradebook.merge([row("copy-cuda", "passed", 3.0, on="cuda")], other_answers)
    assert merged[1].status == "pending", "a result is never reused for other answers"
    old_format = [Row("ann", "01_copy", "copy-cuda", "passed", 3.0, 3.0, "old")]  # no answers hash
    assert gradebook.merge(old_format, cpu)[1].status == "pending"
    other = [Row("bob", "01_copy", "copy-tilelang", "passed", 3.0, 3.0, "")]
    assert len(gradebook.merge(other, cpu)) == 3, "a regrade of ann keeps bob"


def test_gradebook_cells_are_never_formulas(tmp_path):
    rows = [Row("ann", "01_copy", "copy-cuda", "failed", 0.0, 3.0, reason)
            for reason in ('=HYPERLINK("http://x")', "+1", "-2+3", "@SUM(A1)", "\tx", "plain")]
    gradebook.write(tmp_path, rows, ["01_copy"])
    with open(tmp_path / "gradebook.csv", newline="") as f:
        reasons = [r["reason"] for r in csv.DictReader(f)]
    assert all(r.startswith("'") for r in reasons[:-1]) and "plain" in reasons, reasons
    assert gradebook.read_rows(tmp_path / "gradebook.csv")[0].points == 0.0


def test_the_grader_refuses_without_a_sandbox(tmp_path):
    (tmp_path / "class").mkdir()
    env = {**os.environ, "PATH": "/nonexistent"}
    result = subprocess.run([*GRADE, str(tmp_path / "class"), "--labs", str(LABS), "-o", str(tmp_path / "o")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 2 and "bubblewrap" in result.stderr and "--unsafe-no-sandbox" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["{file}"], "is not a folder"),
    (["{sub}", "--labs", "{file}"], "not a folder of instructor notebooks"),
    (["{sub}", "-o", "{file}"], "not a folder"),
    (["{sub}", "-o", "{sub}/out"], "outside"),
    (["{sub}", "--lab", "nope"], "not among"),
    (["{sub}", "--jobs", "0"], "positive"),
    (["{sub}", "--frobnicate"], "unrecognized arguments"),
])
def test_cli_arguments_are_checked(tmp_path, args, message):
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "sub").mkdir()
    argv = [a.format(file=tmp_path / "a_file", sub=tmp_path / "sub") for a in args]
    if "--labs" not in argv:
        argv += ["--labs", str(LABS)]
    if "-o" not in argv:
        argv += ["-o", str(tmp_path / "out")]
    result = subprocess.run([*GRADE, *argv], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_help_answers_without_torch():
    code = ("import sys\nfrom operator_course.grader import grade\ntry:\n    grade.main(['--help'])\n"
            "except SystemExit:\n    pass\nprint('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip().endswith("False"), result.stdout[-500:] + result.stderr[-500:]


def test_cpu_verdicts_can_wait_for_a_gpu():
    """course.toml's grading.cpu_verdicts = "pending": a CUDA kernel judged on the CPU emulator keeps
    its result in the reason and its points pending until a GPU pass."""
    from operator_course.grader.assemble import CheckSpec
    from operator_course.grader.score import Job, verdict

    spec = next(s for s in __import__("operator_course.grader.assemble", fromlist=["x"]).check_specs(
        __import__("nbformat").read(str(LABS / "01_copy.ipynb"), as_version=4), "01_copy.ipynb") if s.id == "copy-cuda")
    assert isinstance(spec, CheckSpec)
    job = Job(spec, "cuda-cpu", {}, [], result={"error": "copy (CUDA) is wrong for shape (7,)"})
    counted = verdict(spec, job, None, "ann", "01_copy", "count")
    waiting = verdict(spec, job, None, "ann", "01_copy", "pending")
    assert counted.status == "failed" and waiting.status == "pending" and "wrong for shape" in waiting.reason
