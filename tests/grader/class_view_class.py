"""A small graded class for the class-view tests, built without running the grader: the gradebook
rows a grading run of lab 1 would write (gradebook.write: gradebook.csv, totals.csv, feedback/),
the timings a GPU pass would record (each from a real verified_timing.Measurement's summary, or the
harness's own ImpossibleTiming message, read back by class_view.timing_from_result as score.py does),
logs, a manifest, the course's reference kernel (OUT/reference/timings.json), and submissions the
similarity check reads (tests/labs/similar/: two planted pairs in lab 1).

The students, and what each must show:
  honest_1, honest_2, honest_4   timed, unflagged: on the public board (honest_4 fails the check)
  ref_a / ref_copy               planted similar pair (ref_copy: the solution disguised); timed
  honest_3 / peer_copy           planted similar pair (peer_copy took honest_3's TileLang cell); timed
  starter_nearly                 the starter, a constant changed: compile error, no timing
  carol                          the harness refused her timing as impossible (ImpossibleTiming)
  dave                           timed at 105% of the ceiling measured in his run: passes the referee
                                 (1.15x margin), still faster than the ceiling
  erin                           FLAGGED: a wrong result while timed (and the flags note)
  ivan                           on the roster, no notebook for lab 1
  zoe                            on the roster, not in the gradebook at all
  bob_late                       timed, handed in late (a late row)
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
SIMILAR = ROOT / "tests" / "labs" / "similar"
LAB = "01_copy"
CHECKS = (("copy-tilelang", 3.0), ("copy-cuda", 3.0), ("copy-performance", 2.0), ("copy-tilelang-again", 1.0))
CEILING = 3000.0  # GB/s, the copy ceiling "measured" in each run
ROSTER = ["bob_late", "carol", "dave", "erin", "honest_1", "honest_2", "honest_3", "honest_4", "ivan",
          "peer_copy", "ref_a", "ref_copy", "starter_nearly", "zoe"]
# % of the ceiling each student's kernel reaches (both shapes), or what went wrong
TIMED = {"honest_1": 92.0, "honest_2": 41.0, "honest_4": 9.0, "ref_a": 80.0, "ref_copy": 79.0,
         "honest_3": 61.0, "peer_copy": 60.0, "dave": 105.0, "bob_late": 55.0}
PUBLIC = {"honest_1", "honest_2", "honest_4", "bob_late"}  # on the public board
FLAGGED = {"ref_a", "ref_copy", "honest_3", "peer_copy", "carol", "dave", "erin"}
REFERENCE_PERCENT = 75.0
TORCH_PERCENT = 85.0
PLANTED_PAIRS = {(LAB, "ref_a", "ref_copy"), (LAB, "honest_3", "peer_copy")}


def measurement(percent: float, torch_percent: float = TORCH_PERCENT, ceiling: float = CEILING):
    """A Measurement of the copy op as the harness would report it on its two shapes."""
    from operator_runtime_testing.verified_timing import Measurement, ShapeTiming
    import torch

    m = Measurement("copy", "cuda", torch.float32, ceiling=ceiling)
    for shape in ((1 << 26,), (47_190_531,)):
        nbytes = 2 * 4 * shape[0]
        ours, theirs = nbytes / (percent / 100 * ceiling * 1e6), nbytes / (torch_percent / 100 * ceiling * 1e6)
        m.shapes.append(ShapeTiming(shape, ours, theirs, nbytes, None))
    return m


def impossible_message() -> str:
    from operator_runtime_testing.verified_timing import ImpossibleTiming, ShapeTiming, referee

    timing = ShapeTiming((1 << 26,), 0.01, 0.2, 8 << 26, None)  # 53687 GB/s
    try:
        referee("copy", timing, CEILING, "cuda")
    except ImpossibleTiming as e:
        return str(e)
    raise AssertionError("the referee let an impossible timing through")


def _timing(result: dict) -> dict | None:
    from operator_course.grader.class_data import timing_from_result

    return timing_from_result(result, "copy")


def build_class(root: Path, with_similarity: bool = True) -> dict:
    """root/grades (OUT), root/submissions, root/labs, root/roster.txt; returns their paths."""
    from operator_course.grader import gradebook
    from operator_course.grader.class_data import record_timings
    from operator_course.grader.gradebook import Row

    out, subs, labs = root / "grades", root / "submissions", root / "labs"
    for folder in (out, subs, labs):
        folder.mkdir(parents=True)
    (root / "roster.txt").write_text("\n".join(ROSTER) + "\n")
    rows: list[Row] = []
    timings: dict[tuple[str, str], dict] = {}

    def add(student, check, status, points, reason, timing=None):
        pts = dict(CHECKS)[check]
        row = Row(student, LAB, check, status, points if points is not None else (pts if status == "passed" else 0.0),
                  pts, reason, answers=f"hash-{student}", graded_on="cuda")
        if timing is not None:
            row.timing = timing
        rows.append(row)

    for student in ROSTER:
        if student == "zoe":
            continue
        if student == "ivan":
            for check, _ in CHECKS:
                add(student, check, "failed", 0.0, "no notebook submitted for this lab")
            continue
        if student == "starter_nearly":
            add(student, "copy-tilelang", "failed", 0.0,
                "copy (TileLang) is wrong for shape (1000,) float32: 1000 of 1000 elements differ.\n"
                "Every element is wrong. Hint: the kernel never wrote the output: store the tile into Y.")
            add(student, "copy-cuda", "failed", 0.0, 'line 7 of CUDA_SOURCE: error: identifier "my_secret_var" is '
                "undefined\n  <img src=x onerror=alert(1)>")  # the student's own text, quoted by the compiler
            add(student, "copy-performance", "failed", 0.0, 'line 7 of CUDA_SOURCE: error: identifier "my_secret_var" '
                "is undefined")
            add(student, "copy-tilelang-again", "failed", 0.0,
                "copy (TileLang, second draw) is wrong for shape (77,) float32: 77 of 77 elements differ.\n"
                "Every element is wrong. Hint: the kernel never wrote the output: store the tile into Y.")
            continue
        add(student, "copy-tilelang", "passed", None, "copy (TileLang): passed on 18 inputs")
        add(student, "copy-cuda", "passed", None, "copy (CUDA): passed on 18 inputs")
        if student == "honest_2":
            add(student, "copy-tilelang-again", "failed", 0.0,
                "copy (TileLang, second draw) is wrong for shape (4099,) float32: 3 of 4099 elements differ.\n"
                "Only the tail is wrong: the last 3 elements (4096..4098). Hint: guard the last tile: i < n.")
        else:
            add(student, "copy-tilelang-again", "passed", None, "copy (TileLang, second draw): passed on 18 inputs")
        if student == "carol":
            result = {"error": impossible_message(), "flag": "impossible timing"}
            add(student, "copy-performance", "failed", 0.0,
                f"FLAGGED for the instructor (impossible timing): {result['error']}", _timing(result))
            rows.append(Row(student, LAB, "flags", "note", 0.0, 0.0, "copy-performance: impossible timing"))
        elif student == "erin":
            result = {"error": "copy: timed call 1 on shape 67108864 computed a wrong result (33554432 of 67108864 "
                               "elements off torch's float64 answer beyond the correctness check's tolerance)",
                      "flag": "wrong result while timed"}
            add(student, "copy-performance", "failed", 0.0,
                f"FLAGGED for the instructor (wrong result while timed): {result['error']}", _timing(result))
            rows.append(Row(student, LAB, "flags", "note", 0.0, 0.0, "copy-performance: wrong result while timed"))
        else:
            m = measurement(TIMED[student])
            result = {"error": None, "ratio": m.ratio, "summary": m.summary}
            ok = m.ratio >= 0.5
            add(student, "copy-performance", "passed" if ok else "failed", None,
                m.summary + ("" if ok else "; this check needs 0.50x torch"), _timing(result))
    rows.append(Row("bob_late", LAB, "late", "late", -0.9, 0.0, "submitted 2026-10-07T10:00:00+00:00, 2 day(s) after "
                    "the due date 2026-10-05T23:59:00+00:00: minus 10% of the 9 points earned"))
    rows.append(Row("honest_4", LAB, "copy-extra", "pending", 0.0, 1.0,
                    "compiles for sm_90; the kernel runs when a GPU machine grades it"))
    rows.sort(key=lambda r: (r.student, r.lab))
    gradebook.write(out, rows, [LAB])
    record_timings(out, rows, rows, "2026-10-06T12:00:00+0000")
    (out / "manifest.json").write_text(json.dumps({"graded_at": "2026-10-06T12:00:00+0000", "device": "cuda",
                                                   "labs": {LAB: {"path": "labs/01_copy.ipynb"}}}))
    for student in ("honest_1", "erin", "ref_copy"):
        folder = out / "logs" / student / LAB
        folder.mkdir(parents=True)
        (folder / "executed.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4,
                                                           "nbformat_minor": 5}))
        (folder / "notebook.log").write_text(f"{student}'s run\n")
    # the course's reference kernel, graded into OUT/reference/ (class_view.py --reference)
    ref = measurement(REFERENCE_PERCENT)
    ref_row = Row("reference", LAB, "copy-performance", "passed", 2.0, 2.0, ref.summary, "hash-ref", "cuda")
    ref_row.timing = _timing({"error": None, "ratio": ref.ratio, "summary": ref.summary})
    (out / "reference").mkdir()
    record_timings(out / "reference", [ref_row], [ref_row], "2026-10-06T11:00:00+0000")
    if with_similarity:
        write_submissions(subs, labs)
    return {"out": out, "submissions": subs, "labs": labs, "roster": ROSTER}


def write_submissions(subs: Path, labs: Path) -> None:
    """Lab 1 notebooks of the similar class (tests/labs/similar/ and ref_a, the solutions)."""
    from operator_course.grader.notebook import SOLUTION_BEGIN, SOLUTION_END, lab_meta, read
    from operator_course.grader.release import release_notebook

    path = ROOT / "labs" / f"{LAB}.ipynb"
    shutil.copyfile(path, labs / path.name)
    instructor = read(path)
    released = release_notebook(instructor)

    def unmarked(source: str) -> str:
        return "\n".join(line for line in source.split("\n") if line.strip() not in (SOLUTION_BEGIN, SOLUTION_END))

    solutions = {lab_meta(c)["answer"]: unmarked(c.source) for c in instructor.cells if "answer" in lab_meta(c)}
    students = {p.name: {f.stem: f.read_text() for f in p.glob("*.py")} for p in sorted(SIMILAR.iterdir()) if p.is_dir()}
    students["ref_a"] = {a: solutions[a] for a in ("copy-tilelang", "copy-cuda")}
    for student, answers in students.items():
        nb = copy.deepcopy(released)
        for cell in nb.cells:
            answer = lab_meta(cell).get("answer")
            if answer in answers:
                cell.source = answers[answer]
        (subs / student).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(subs / student / path.name))
