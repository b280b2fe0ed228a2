"""Grading beyond one machine (grader/merge.py, hosting/kubernetes/grade-job.yaml): grading
outputs of parts of a class (one per job) merged into one gradebook, the shards those jobs grade,
and the Job recipe (parsed only: no cluster here).

Three synthetic parts (gradebook.Row, gradebook.write, class_data.record_timings, a manifest as
grade.py writes it):
  A  10:00  seed 7  cpu   ada, bob (labs 1 and 2), cy (lab 1: its performance check pending)
  B  11:00  seed 7  cuda  dee, eve (lab 1, timed), cy (lab 1, the same answers: timed now)
  C  12:00  seed 8  cpu   bob lab 1 resubmitted (other answers), eve lab 1 again on a CPU
The merge must equal one gradebook.merge over A, B, C in time order: bob's lab 1 from C (later),
his lab 2 from A, cy from B (A's was pending), eve from B (a GPU's verdict outranks C's CPU one
on the same answers)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from operator_course.grader import class_data as CD
from operator_course.grader import gradebook as GB
from operator_course.grader import merge as M
from operator_course.grader.gradebook import Row

ROOT = Path(__file__).resolve().parents[2]
L1, L2 = "01_copy", "02_vector_add"
LABS = [L1, L2]
PICTURE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
TIMES = {"A": "2026-10-06T10:00:00+0000", "B": "2026-10-06T11:00:00+0000", "C": "2026-10-06T12:00:00+0000"}
SEEDS = {"A": 7, "B": 7, "C": 8}


def _timing(ratio: float) -> dict:
    return {"op": "copy", "unit": "GB/s", "ceiling": 3000.0, "ratio": ratio, "flag": None,
            "shapes": [{"shape": [1 << 24], "rate": 1500.0 * ratio, "torch_rate": 1500.0, "ratio": ratio}]}


def lab_rows(student, lab, answers, device, perf="passed", picture=False, ratio=1.0) -> list[Row]:
    """One student's lab as grade.py records it: two checks and a note."""
    correct = Row(student, lab, f"{lab[3:]}-correct", "passed", 5.0, 5.0, "all elements match", answers, device)
    if picture:
        correct = Row(student, lab, f"{lab[3:]}-correct", "failed", 0.0, 5.0, "3 elements differ", answers, device,
                      PICTURE)
    if perf == "pending":
        timed = Row(student, lab, f"{lab[3:]}-performance", "pending", 0.0, 2.0, "needs a GPU", answers, device)
    else:
        timed = Row(student, lab, f"{lab[3:]}-performance", "passed", 2.0, 2.0, f"{ratio}x torch", answers, device)
        timed.timing = _timing(ratio)
    note = Row(student, lab, "notes", "note", 0.0, 0.0, f"graded by {device}", "", "")
    return [correct, timed, note]


def part_rows() -> dict[str, list[Row]]:
    return {
        "A": [*lab_rows("ada", L1, "a1", "cpu", picture=True), *lab_rows("ada", L2, "a2", "cpu", ratio=0.8),
              *lab_rows("bob", L1, "b1", "cpu", ratio=0.5), *lab_rows("bob", L2, "b2", "cpu", ratio=0.6),
              *lab_rows("cy", L1, "c1", "cpu", perf="pending"),
              Row("ada", "-", "notes", "note", 0.0, 0.0, "not on the roster")],
        "B": [*lab_rows("dee", L1, "d1", "cuda", ratio=0.9), *lab_rows("eve", L1, "e1", "cuda", ratio=1.1),
              *lab_rows("cy", L1, "c1", "cuda", ratio=1.2)],
        "C": [*lab_rows("bob", L1, "b1-new", "cpu", ratio=0.7), *lab_rows("eve", L1, "e1", "cpu", ratio=0.3)],
    }


def write_part(folder: Path, name: str, rows: list[Row], graded_at: str | None = None, seed=None) -> Path:
    """A complete OUT of one job: gradebook, totals, feedback, timings, manifest, logs."""
    graded_at = graded_at or TIMES[name]
    GB.write(folder, rows, LABS)
    CD.record_timings(folder, rows, rows, graded_at)
    devices = {r.graded_on for r in rows if r.graded_on}
    manifest = {"graded_at": graded_at, "device": devices.pop() if len(devices) == 1 else "cpu", "sandbox": True,
                "limits": {}, "jobs": 2, "gpus": [], "seed": SEEDS.get(name, 7) if seed is None else seed,
                "cpu_verdicts": "count", "seconds": 1.0,
                "labs": {lab: {"path": f"labs/{lab}.ipynb", "sha256": "0" * 64} for lab in LABS}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    for student, lab in {(r.student, r.lab) for r in rows if r.lab != "-"}:
        logs = folder / "logs" / student / lab
        logs.mkdir(parents=True, exist_ok=True)
        (logs / "notebook.log").write_text(f"part {name}\n")
    return folder


@pytest.fixture
def parts(tmp_path) -> dict[str, Path]:
    return {name: write_part(tmp_path / f"part-{name}", name, rows) for name, rows in part_rows().items()}


def expected_rows() -> list[Row]:
    """What one gradebook.merge over every part's rows, in time order, gives."""
    merged: list[Row] = []
    for name, rows in part_rows().items():
        merged = GB.merge(merged, rows)
    return merged


def read(path: Path) -> str:
    return path.read_text()


def points(rows: list[Row]) -> dict[tuple[str, str, str], tuple]:
    return {r.key: (r.status, r.points, r.max, r.answers, r.graded_on) for r in rows}


def test_parts_merge_into_the_gradebook_one_run_would_write(parts, tmp_path):
    out = tmp_path / "class"
    assert M.main([str(parts["C"]), str(parts["A"]), str(parts["B"]), "-o", str(out)]) == 0  # any order
    one = tmp_path / "one"
    GB.write(one, expected_rows(), LABS)
    assert read(out / "gradebook.csv") == read(one / "gradebook.csv")
    assert read(out / "totals.csv") == read(one / "totals.csv")
    got = {r.key: r for r in GB.read_rows(out / "gradebook.csv")}
    assert got[("bob", L1, "copy-performance")].answers == "b1-new"  # C is later: his resubmission counts
    assert got[("bob", L2, "vector_add-performance")].answers == "b2"  # only A graded his lab 2
    assert got[("cy", L1, "copy-performance")].status == "passed"  # B's real result over A's pending
    assert got[("eve", L1, "copy-performance")].graded_on == "cuda"  # a GPU's verdict over C's CPU one
    totals = {line.split(",")[0]: line.split(",")[1:] for line in read(out / "totals.csv").splitlines()[1:]}
    assert totals["ada"] == ["2", "7", "9", "14", "0"]  # lab 1: its correctness check failed
    assert totals["cy"] == ["7", "0", "7", "7", "0"]
    assert set(totals) == {"ada", "bob", "cy", "dee", "eve"}


def test_feedback_logs_and_timings_come_from_the_part_that_counts(parts, tmp_path):
    out = tmp_path / "class"
    assert M.main([str(p) for p in parts.values()] + ["-o", str(out)]) == 0
    for student in ("ada", "bob", "cy", "dee", "eve"):
        text = read(out / "feedback" / f"{student}.md")
        assert text.startswith(f"# Feedback for {student}") and CD.FEEDBACK_MARK in text  # the class view's line
    # ada's rows all came from A: A's own file, with the picture the gradebook cannot hold
    assert f"base64,{PICTURE}" in read(out / "feedback" / "ada.md")
    assert read(out / "feedback" / "ada.md").count(CD.FEEDBACK_MARK) == 1
    cy = read(out / "feedback" / "cy.md")  # B's (A's said pending)
    assert "Total: 7 / 7" in cy and "pending" not in cy
    logs = {(s, lab): read(out / "logs" / s / lab / "notebook.log").strip()
            for s, lab in [("ada", L1), ("bob", L1), ("bob", L2), ("cy", L1), ("dee", L1), ("eve", L1)]}
    assert logs == {("ada", L1): "part A", ("bob", L1): "part C", ("bob", L2): "part A", ("cy", L1): "part B",
                    ("dee", L1): "part B", ("eve", L1): "part B"}
    timings = CD.read_timings(out)
    kept = {k for k, r in ((CD._key(*r.key), r) for r in expected_rows()) if r.status != "pending" and
            getattr(r, "timing", None)}
    assert set(timings) == kept
    assert timings[f"cy/{L1}/copy-performance"]["graded_at"] == TIMES["B"]
    assert timings[f"eve/{L1}/copy-performance"]["ratio"] == 1.1  # B's timing, as its row
    assert timings[f"bob/{L1}/copy-performance"]["answers"] == "b1-new"
    assert (out / "dashboard" / "index.html").is_file() and (out / "leaderboard" / "index.html").is_file()
    board = read(out / "leaderboard" / "index.html")
    assert "ada" not in board.split("<h1>")[1]  # pseudonyms only


def test_the_manifest_names_the_parts_and_flags_different_seeds(parts, tmp_path, capsys):
    out = tmp_path / "class"
    assert M.main([str(parts["A"]), str(parts["B"]), str(parts["C"]), "-o", str(out), "--no-class-view"]) == 0
    assert "different seeds" in capsys.readouterr().err
    m = json.loads(read(out / "manifest.json"))
    assert m["seeds_differ"] is True and m["seeds"] == [7, 8] and m["seed"] is None
    assert any("--seed" in w for w in m["warnings"])
    assert [p["path"] for p in m["parts"]] == [str(parts[n]) for n in "ABC"]
    assert m["graded_at"] == TIMES["C"] and m["device"] == "cpu, cuda" and m["students"] == 5
    overlaps = {(o["student"], o["lab"]): o for o in m["overlaps"]}
    assert set(overlaps) == {("bob", L1), ("cy", L1), ("eve", L1)}
    assert overlaps[("bob", L1)]["answers_differ"] and overlaps[("bob", L1)]["counts"] == str(parts["C"])
    assert not overlaps[("eve", L1)]["answers_differ"]
    assert list(m["labs"]) == LABS

    same = tmp_path / "same-seed"
    assert M.main([str(parts["A"]), str(parts["B"]), "-o", str(same), "--no-class-view"]) == 0
    m = json.loads(read(same / "manifest.json"))
    assert m["seeds_differ"] is False and m["seed"] == 7 and m["warnings"] == []


def test_two_parts_that_graded_other_answers_at_one_time_are_refused(parts, tmp_path, capsys):
    rival = write_part(tmp_path / "part-D", "D", lab_rows("bob", L1, "b1-other", "cpu"), graded_at=TIMES["C"])
    out = tmp_path / "class"
    assert M.main([str(parts["C"]), str(rival), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "student bob, lab 01_copy" in err and str(rival) in err and str(parts["C"]) in err
    assert not (out / "gradebook.csv").exists()
    # the same answers at one time: nothing to decide (the command line's order)
    twin = write_part(tmp_path / "part-E", "E", lab_rows("bob", L1, "b1-new", "cpu"), graded_at=TIMES["C"])
    assert M.main([str(parts["C"]), str(twin), "-o", str(out), "--no-class-view"]) == 0


def test_merging_into_an_earlier_gradebook_is_grading_into_it(parts, tmp_path):
    """OUT's own gradebook is the oldest part: A merged now, then B and C later, gives what A, B
    and C at once give (and what grade.py's own regrade merge would)."""
    at_once, stepwise = tmp_path / "at-once", tmp_path / "stepwise"
    assert M.main([str(parts["A"]), str(parts["B"]), str(parts["C"]), "-o", str(at_once), "--no-class-view"]) == 0
    assert M.main([str(parts["A"]), "-o", str(stepwise), "--no-class-view"]) == 0
    assert M.main([str(parts["B"]), str(parts["C"]), "-o", str(stepwise), "--no-class-view"]) == 0
    for name in ("gradebook.csv", "totals.csv", "timings.json"):
        assert read(at_once / name) == read(stepwise / name), name
    assert f"base64,{PICTURE}" in read(stepwise / "feedback" / "ada.md")  # kept from the earlier merge
    m = json.loads(read(stepwise / "manifest.json"))
    assert m["parts"][0]["earlier"] is True and m["seeds"] == [7, 8]
    assert points(M.read_part(stepwise, -1).rows) == points(expected_rows())  # "'-" read back as "-"


def test_an_unfinished_part_is_refused_by_name(parts, tmp_path, capsys):
    broken = tmp_path / "part-X"
    (broken / "logs").mkdir(parents=True)
    assert M.main([str(parts["A"]), str(broken), "-o", str(tmp_path / "class")]) == 2
    assert f"part {broken} has no gradebook.csv" in capsys.readouterr().err
    (parts["B"] / "manifest.json").unlink()
    assert M.main([str(parts["A"]), str(parts["B"]), "-o", str(tmp_path / "class")]) == 2
    assert "manifest.json" in capsys.readouterr().err
    assert M.main([str(parts["A"]), str(parts["A"]), "-o", str(tmp_path / "class")]) == 2
    assert M.main([str(parts["A"]), "-o", str(parts["A"])]) == 2


# --- the shards ---------------------------------------------------------------------------------

def make_class(folder: Path) -> list[str]:
    """A submissions folder with every kind of entry the grader meets; returns the roster."""
    nb = (ROOT / "labs" / f"{L1}.ipynb").read_bytes()
    for i in range(11):
        (folder / f"s{i:02d}").mkdir(parents=True)
        (folder / f"s{i:02d}" / f"{L1}.ipynb").write_bytes(nb)
    (folder / "s03" / "notes.txt").write_text("not a notebook")
    (folder / "s04" / "old.ipynb").write_bytes(nb)
    os.utime(folder / "s04" / "old.ipynb", (1_000_000_000, 1_000_000_000))
    (folder / "zed.ipynb").write_bytes(nb)  # a notebook per student
    (folder / "README.md").write_text("a stray file")
    os.symlink(folder / "s00", folder / "linky")  # the grader refuses links
    os.link(folder / "s01" / f"{L1}.ipynb", folder / "s02" / "twin.ipynb")  # and files with two names
    (folder / "bad name").mkdir()  # not a usable student name: a note
    return ["s00", "s05", "absent1", "absent2", "zed"]


def _collected(folder: Path, roster, labs):
    from operator_course.grader.submissions import collect

    def same(text):  # a file linked into the shard has one more name: the same refusal
        return re.sub(r"a file with \d+ hard links", "a file with N hard links", text) if text else text

    subs, notes = collect(folder, labs, {k: v.answers for k, v in labs.items()}, roster)
    return ({(s.student, s.lab): (same(s.problem), [same(n) for n in s.notes], s.answers) for s in subs},
            {k: [same(n) for n in v] for k, v in notes.items()})


def test_shards_are_disjoint_cover_the_class_and_collect_as_the_whole(tmp_path):
    from operator_course.grader.grade import load_labs

    subs = tmp_path / "submissions"
    roster = make_class(subs)
    (tmp_path / "labs").mkdir()
    (tmp_path / "labs" / f"{L1}.ipynb").write_bytes((ROOT / "labs" / f"{L1}.ipynb").read_bytes())
    labs = load_labs(tmp_path / "labs")
    whole, whole_notes = _collected(subs, roster, labs)
    count, seen, rosters = 3, [], []
    for index in range(count):
        shard = tmp_path / "shards" / f"shard-{index}"
        assert M.main(["shard", str(subs), "--index", str(index), "--count", str(count), "-o", str(shard),
                       "--roster", str(_roster_file(tmp_path, roster))]) == 0
        mine = json.loads(read(shard / M.SHARD_MARK))["students"]
        seen.append(set(mine))
        shard_roster = read(tmp_path / "shards" / f"shard-{index}.roster.txt").split()
        rosters.append(shard_roster)
        got, notes = _collected(shard, shard_roster, labs)
        assert got == {k: v for k, v in whole.items() if k[0] in mine}
        assert notes == {k: v for k, v in whole_notes.items() if k in mine}
        assert not (shard / "README.md").exists() and not (shard / "s03" / "notes.txt").exists()
    everyone = set().union(*seen)
    assert sum(len(s) for s in seen) == len(everyone)  # disjoint
    assert everyone == {f"s{i:02d}" for i in range(11)} | {"zed", "linky", "bad_name", "absent1", "absent2"}
    assert max(map(len, seen)) - min(map(len, seen)) <= 1
    assert sorted(sum(rosters, [])) == sorted(roster)
    # what the grader refuses stays refused, and the times that pick a student's notebook stay
    where = {s: tmp_path / "shards" / f"shard-{i}" for i, mine in enumerate(seen) for s in mine}
    assert (where["linky"] / "linky").is_symlink()
    twin = os.lstat(where["s02"] / "s02" / "twin.ipynb")
    assert twin.st_nlink > 1 or not stat.S_ISREG(twin.st_mode)
    assert os.stat(where["s04"] / "s04" / "old.ipynb").st_mtime == 1_000_000_000


def _roster_file(tmp_path: Path, roster: list[str]) -> Path:
    path = tmp_path / "roster.txt"
    path.write_text("\n".join(roster) + "\n")
    return path


def test_a_shard_is_made_afresh_and_never_over_other_files(tmp_path, capsys):
    subs = tmp_path / "submissions"
    make_class(subs)
    shard = tmp_path / "shard"
    assert M.main(["shard", str(subs), "--index", "1", "--count", "2", "-o", str(shard)]) == 0
    (shard / "leftover").mkdir()
    assert M.main(["shard", str(subs), "--index", "1", "--count", "2", "-o", str(shard)]) == 0  # a retried job
    assert not (shard / "leftover").exists()
    other = tmp_path / "other"
    (other / "keep").mkdir(parents=True)
    assert M.main(["shard", str(subs), "--index", "0", "--count", "2", "-o", str(other)]) == 2
    assert (other / "keep").is_dir() and "not empty" in capsys.readouterr().err
    assert M.main(["shard", str(subs), "--index", "2", "--count", "2", "-o", str(tmp_path / "x")]) == 2
    assert M.main(["shard", str(subs), "--index", "0", "--count", "2", "-o", str(subs / "inside")]) == 2


# --- the Job recipe -------------------------------------------------------------------------------

def test_the_grade_job_recipe_parses_with_an_indexed_gpu_job_and_a_merge():
    yaml = pytest.importorskip("yaml")
    path = ROOT / "python" / "operator_course" / "hosting" / "kubernetes" / "grade-job.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    jobs = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Job"}
    assert {d["kind"] for d in docs} == {"Job", "PersistentVolumeClaim"}
    grade, merge = jobs["oprt-grade"], jobs["oprt-grade-merge"]
    spec = grade["spec"]
    assert grade["apiVersion"] == "batch/v1" and spec["completionMode"] == "Indexed"
    assert spec["parallelism"] == spec["completions"] >= 2
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    env = {e["name"]: e for e in container["env"]}
    assert int(env["SHARDS"]["value"]) == spec["completions"]
    assert env["OPRT_GRADE_SEED"]["valueFrom"]["secretKeyRef"]["key"] == "seed"
    script = container["args"][0]
    assert "operator_course.grader.merge shard" in script and "$JOB_COMPLETION_INDEX" in script
    assert "operator_course.grader.grade" in script and '--seed "$OPRT_GRADE_SEED"' in script
    assert "part-$JOB_COMPLETION_INDEX" in script
    (merger,) = merge["spec"]["template"]["spec"]["containers"]
    assert "operator_course.grader.merge" in merger["args"][0] and "nvidia.com/gpu" not in merger["resources"]["limits"]
    assert {e["name"]: e["value"] for e in merger["env"]} == {"SHARDS": env["SHARDS"]["value"],
                                                              "ROUND": env["ROUND"]["value"]}
    claim = next(d for d in docs if d["kind"] == "PersistentVolumeClaim")["metadata"]["name"]
    for job in (grade, merge):
        spec = job["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        assert volumes["grading"]["persistentVolumeClaim"]["claimName"] == claim
        for c in spec["containers"]:
            assert {m["name"] for m in c["volumeMounts"]} <= set(volumes)
            assert c["command"][:2] == ["/bin/sh", "-ec"]
            done = subprocess.run(["sh", "-n", "-c", c["args"][0]], capture_output=True, text=True)
            assert done.returncode == 0, done.stderr  # the scripts are valid shell
        assert job["metadata"]["labels"]["oprt-step"] in ("grade", "merge")


GRADE_STAND_IN = """
import argparse, json, time
from pathlib import Path
from operator_course.grader import gradebook as GB
from operator_course.grader.merge import students_of
from operator_course.grader.submissions import read_roster

p = argparse.ArgumentParser()
p.add_argument("submissions", type=Path)
p.add_argument("--labs")
p.add_argument("-o", "--out", type=Path)
p.add_argument("--seed", type=int)
p.add_argument("--roster", type=Path)
p.add_argument("--jobs")
p.add_argument("--memory-gb")
p.add_argument("--per-process-limits", action="store_true")
a = p.parse_args()
roster = read_roster(a.roster) if a.roster else None
rows = [GB.Row(s, "01_copy", "copy-correct", "passed", 5.0, 5.0, "ok", s, "cuda")
        for s in sorted(students_of(a.submissions, roster))]
GB.write(a.out, rows, ["01_copy"])
(a.out / "manifest.json").write_text(json.dumps({"graded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                                 "seed": a.seed, "device": "cuda", "labs": {}}))
"""


def test_the_job_scripts_shard_grade_and_merge_as_written(tmp_path):
    """The two Jobs' shell, run here with /grading and /scratch moved into a temp folder and a
    stand-in for grade.py that writes a part from the shard it was given: the shards cover the
    class and the merge finds every part."""
    yaml = pytest.importorskip("yaml")
    path = ROOT / "python" / "operator_course" / "hosting" / "kubernetes" / "grade-job.yaml"
    jobs = {d["metadata"]["name"]: d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "Job"}
    grading, scratch, bin_dir = tmp_path / "grading", tmp_path / "scratch", tmp_path / "bin"
    make_class(grading / "submissions")
    (grading / "labs").mkdir()
    (grading / "roster.txt").write_text("s00\nabsent1\n")
    bin_dir.mkdir()
    stand_in = bin_dir / "python"  # grade.py -> a part of the shard's students; anything else: the real python
    stand_in.write_text(f"""#!/bin/sh
if [ "$2" = operator_course.grader.grade ]; then
  shift 2
  exec {sys.executable} {tmp_path / "grade_stand_in.py"} "$@"
fi
exec {sys.executable} "$@"
""")
    stand_in.chmod(0o755)
    (tmp_path / "grade_stand_in.py").write_text(GRADE_STAND_IN)

    def run(job, index=None):
        (container,) = job["spec"]["template"]["spec"]["containers"]
        script = container["args"][0].replace("/grading", str(grading)).replace("/scratch", str(scratch / str(index)))
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OPRT_GRADE_SEED": "7",
               **{e["name"]: e["value"] for e in container["env"] if "value" in e}}
        if index is not None:
            env["JOB_COMPLETION_INDEX"] = str(index)
        return subprocess.run(["/bin/sh", "-ec", script], env=env, capture_output=True, text=True, timeout=300)

    grade = jobs["oprt-grade"]
    for index in range(grade["spec"]["completions"]):
        (scratch / str(index)).mkdir(parents=True)
        done = run(grade, index)
        assert done.returncode == 0, done.stderr
    done = run(jobs["oprt-grade-merge"])
    assert done.returncode == 0, done.stderr
    totals = read(grading / "class" / "totals.csv").splitlines()[1:]
    students = {line.split(",")[0] for line in totals}
    assert students == {f"s{i:02d}" for i in range(11)} | {"zed", "linky", "bad_name", "absent1"}
    m = json.loads(read(grading / "class" / "manifest.json"))
    assert len(m["parts"]) == grade["spec"]["completions"] and m["seeds"] == [7] and m["overlaps"] == []


def test_a_gradebook_reads_back_what_it_wrote(tmp_path):
    """neutral() guards cells a spreadsheet would run ('-' becomes "'-"); read_rows undoes it, so a
    regrade finds the student-notes rows (lab '-') it wrote, instead of keeping them beside new ones."""
    from operator_course.grader import gradebook
    from operator_course.grader.gradebook import Row

    rows = [Row("ada", "-", "notes", "note", 0.0, 0.0, "=cmd|' /C calc'!A0"),
            Row("ada", "01_copy", "copy-cuda", "failed", 0.0, 2.0, "-1 elements: +inf", "h", "cpu")]
    gradebook.write(tmp_path, rows, ["01_copy"])
    text = (tmp_path / "gradebook.csv").read_text()
    assert "'-" in text and "'=cmd" in text  # still guarded on disk
    back = gradebook.read_rows(tmp_path / "gradebook.csv")
    assert [(r.lab, r.reason) for r in back] == [("-", "=cmd|' /C calc'!A0"), ("01_copy", "-1 elements: +inf")]
    assert len(gradebook.merge(back, rows[:1])) == 2  # the notes row replaced, not kept beside the new one
