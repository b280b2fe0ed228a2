"""Classes of lab-1 submissions for the grading tests, built from files:

tests/labs/control/<student>.py, tests/labs/hostile/<student>.py and tests/labs/performance/
<student>.py (the timing's cheats and honest answers: tests/grader/test_grading_performance.py) each hold
one student's answer, with a header of comment lines:

    # what: one line on what this submission does or tries
    # answer: copy-tilelang            (the answer cell the body replaces; default copy-tilelang)
    # solved: copy-cuda                (answer cells taken from the instructor's solution; optional)
    # expect: copy-tilelang=failed copy-tilelang-again=failed   (status per check on a CPU grader)
    # expect-gpu: copy-cuda=failed     (on a GPU grader, where it differs: a check pending on a CPU
                                       # is judged there, passed unless this line says otherwise)

Every answer cell not named is the release's unsolved stub. ``malformed_class`` adds what no
answer file can express: broken metadata, FIFOs, links, duplicates, empty folders."""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path

import nbformat

from operator_course.grader.notebook import lab_meta, read
from operator_course.grader.release import release_notebook

HERE = Path(__file__).resolve().parent
HEADER = re.compile(r"^# (what|answer|solved|expect|expect-gpu): ?(.*)$")


def parse(path: Path) -> dict:
    spec = {"what": "", "answer": "copy-tilelang", "solved": [], "expect": {}, "expect-gpu": {}, "body": []}
    lines = path.read_text().splitlines()
    while lines and HEADER.match(lines[0]):
        key, value = HEADER.match(lines.pop(0)).groups()
        if key == "solved":
            spec["solved"] = value.split()
        elif key in ("expect", "expect-gpu"):
            spec[key] = dict(item.split("=") for item in value.split())
        else:
            spec[key] = value.strip()
    spec["body"] = "\n".join(lines).strip("\n")
    return spec


def expected(spec: dict, check: str, gpu: bool) -> str:
    """The status ``check`` must get: a check pending on a CPU is judged on a GPU."""
    status = spec["expect"][check]
    if gpu:
        return spec["expect-gpu"].get(check, "passed" if status == "pending" else status)
    return status


def student_notebook(instructor, spec: dict):
    released = release_notebook(instructor)
    solutions = {lab_meta(c)["answer"]: c.source for c in instructor.cells if "answer" in lab_meta(c)}
    nb = copy.deepcopy(released)
    for cell in nb.cells:
        answer = lab_meta(cell).get("answer")
        if answer == spec["answer"]:
            cell.source = spec["body"]
        elif answer in spec["solved"]:
            cell.source = solutions[answer]
    return nb


def write_class(instructor_path: Path, folder: Path, kind: str, only: tuple[str, ...] = ()) -> dict[str, dict]:
    """One folder per answer file of ``kind`` (control | hostile | performance), or of those named in
    ``only``; returns student -> spec."""
    instructor = read(instructor_path)
    specs = {}
    for path in sorted((HERE / kind).glob("*.py")):
        if only and path.stem not in only:
            continue
        spec = parse(path)
        (folder / path.stem).mkdir(parents=True)
        nbformat.write(student_notebook(instructor, spec), str(folder / path.stem / instructor_path.name))
        specs[path.stem] = spec
    return specs


def malformed_class(instructor_path: Path, folder: Path, secret: Path) -> dict[str, str]:
    """Submissions that break the grader's inputs, and what the gradebook must say for each
    (a word of the reason, asserted on every check of lab 1)."""
    instructor = read(instructor_path)
    solved = {"answer": "copy-tilelang", "solved": ["copy-cuda"], "body": _solution(instructor, "copy-tilelang")}
    name = instructor_path.name
    expect = {}

    def write(student: str, nb, filename: str = name) -> Path:
        (folder / student).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(folder / student / filename))
        return folder / student / filename

    nb = student_notebook(instructor, solved)
    next(c for c in nb.cells if "answer" in lab_meta(c)).metadata["lab"] = "answer"  # a str, not a dict
    write("meta_str", nb)
    expect["meta_str"] = "missing"
    nb = student_notebook(instructor, solved)
    for c in nb.cells:
        if "check" in lab_meta(c):
            c.metadata["lab"]["check"] = ["a", "list"]
    write("check_list", nb)
    expect["check_list"] = "passed"  # check cells are the instructor's anyway
    (folder / "fifo").mkdir()
    os.mkfifo(folder / "fifo" / name)
    expect["fifo"] = "regular"
    os.symlink(instructor_path.parent, folder / "linked_folder")
    expect["linked_folder"] = "no notebook"
    (folder / "linked_file").mkdir()
    os.symlink(secret, folder / "linked_file" / name)
    expect["linked_file"] = "malformed"
    write("two_notebooks", student_notebook(instructor, solved))
    write("two_notebooks", student_notebook(instructor, {"answer": "copy-tilelang", "solved": [], "body": ""}),
          "01_copy (1).ipynb")
    expect["two_notebooks"] = "passed"  # the notebook named as handed out wins
    (folder / "empty_folder").mkdir()
    expect["empty_folder"] = "no notebook"
    nb = student_notebook(instructor, solved)
    first = next(i for i, c in enumerate(nb.cells) if lab_meta(c).get("answer") == "copy-tilelang")
    stub = copy.deepcopy(release_notebook(instructor).cells[first])
    nb.cells.insert(first, stub)  # an unsolved copy above the solved one: the last counts
    write("duplicate_answer", nb)
    expect["duplicate_answer"] = "passed"
    write("collision", student_notebook(instructor, solved))
    nbformat.write(student_notebook(instructor, solved), str(folder / "collision.ipynb"))
    expect["collision"] = "passed"
    (folder / "huge").mkdir()
    (folder / "huge" / name).write_bytes(b'{"cells": [' + b" " * (9 << 20) + b"]}")
    expect["huge"] = "limit"
    (folder / "binary").mkdir()
    (folder / "binary" / name).write_bytes(bytes(range(256)) * 8)
    expect["binary"] = "malformed"
    (folder / "hard_link").mkdir()
    os.link(secret, folder / "hard_link" / name)  # another name for a file the student may not read
    expect["hard_link"] = "hard links"
    return expect


def _solution(instructor, answer: str) -> str:
    return next(c.source for c in instructor.cells if lab_meta(c).get("answer") == answer)
