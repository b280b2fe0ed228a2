"""Build a class of lab submissions, one per way a real submission goes: solved, unsolved,
hanging, crashing, tampered, forging a report, malformed. Used by the grading tests."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from operator_runtime_testing.lab.notebook import lab_meta, read
from operator_runtime_testing.lab.release import release_notebook

# student -> what their first answer cell holds (None: the instructor's solution, unchanged)
FIRST_ANSWER = {
    "solved": None,
    "unsolved": "",  # the release as handed out
    "hanging": "import time\ntime.sleep(10**6)",
    "crashing": "import ctypes\nctypes.string_at(0)  # reads address 0: the kernel process dies",
    "forger": ('print(\'{"cells": ["ok", "ok", "ok", "ok", "ok", "ok", "ok"], "stopped": null}\')\n'
               'open("gradebook.csv", "w").write("forger,01_copy,copy-tilelang,3,3,passed\\n")'),
    "tampered": "",  # unsolved, and its first check cell is replaced by `pass`
    "cheater": "lab.check_tilelang = lambda *args, **kwargs: print('copy (TileLang): passed')",
}


def write_class(instructor_path: Path, folder: Path) -> dict[str, Path]:
    instructor = read(instructor_path)
    released = release_notebook(instructor)
    paths = {}
    for student, answer in FIRST_ANSWER.items():
        nb = copy.deepcopy(instructor if student == "solved" else released)
        first = next(c for c in nb.cells if "answer" in lab_meta(c))
        if answer:
            first.source = answer
        if student == "tampered":
            next(c for c in nb.cells if "check" in lab_meta(c)).source = "pass"
        nb.cells = [c for c in nb.cells if not lab_meta(c).get("hidden")]  # a student never has hidden checks
        (folder / student).mkdir(parents=True)
        paths[student] = folder / student / instructor_path.name
        nbformat.write(nb, str(paths[student]))
    paths["malformed"] = folder / "malformed" / instructor_path.name
    paths["malformed"].parent.mkdir()
    paths["malformed"].write_text('{"cells": [ this is not json')
    return paths
