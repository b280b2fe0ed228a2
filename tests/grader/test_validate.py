"""Students validate (issue 30): ``validate`` runs the student's own saved notebook in a fresh
kernel and reports the visible checks' points; the hidden checks are neither run nor named.
Lab 1 (on the CPU here: a few seconds a run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("tilelang", reason="lab 1's TileLang check (requirements.txt)")

from labs.submissions import parse, student_notebook  # noqa: E402

from operator_course.grader.notebook import checks, lab_meta, read  # noqa: E402
from operator_course.grader.release import release_notebook  # noqa: E402
from operator_course.lab import validate as student  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "labs" / "01_copy.ipynb"
HIDDEN = [m for _, m in checks(read(LAB)) if m.get("hidden")]


def visible_points(gpu: bool) -> float:
    return sum(m["points"] for _, m in checks(read(LAB)) if not m.get("hidden") and (gpu or m.get("needs") != "gpu"))


def gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def assert_nothing_hidden(text: str) -> None:
    assert HIDDEN, "lab 1 has no hidden check: this test would prove nothing"
    for meta in HIDDEN:
        assert meta["check"] not in text
    assert "second draw" not in text  # the hidden check's name= in labs/01_copy.ipynb


def test_the_solved_lab_earns_every_visible_point_and_runs_no_hidden_check(tmp_path):
    """labs/01_copy.ipynb is the instructor's: solved, with its hidden check cell in it; and a
    cell that validates and submits (inside validate's run they do nothing, not recurse)."""
    nb = read(LAB)
    nb.cells.append(nbformat.v4.new_code_cell("lab.validate()\nprint(lab.submit('01_copy'))"))
    nbformat.write(nb, str(tmp_path / "01_copy.ipynb"))
    said = []
    result = student.validate(str(tmp_path / "01_copy.ipynb"), handout=tmp_path / "none", say=said.append)
    text = "\n".join(said)
    statuses = {c.id: c.status for c in result.checks}
    assert statuses["copy-tilelang"] == statuses["copy-cuda"] == "passed", text
    assert statuses["copy-performance"] == ("passed" if gpu() else "not checked"), text
    if not gpu():
        assert result.earned == result.possible == visible_points(gpu=False) == 6
        assert result.later == 2 and "graded later" in text
    assert f"You would earn {result.earned:g} of the {result.possible:g} points of the visible checks" in text
    assert "Hidden checks are graded later" in text
    assert_nothing_hidden(text)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01_copy.ipynb"]  # wrote nothing beside it


def test_the_handout_as_released_earns_nothing_through_the_command_line(tmp_path):
    handout = tmp_path / "handout"
    handout.mkdir()
    nbformat.write(release_notebook(read(LAB)), str(handout / "01_copy.ipynb"))
    labs = tmp_path / "home" / "labs"
    labs.mkdir(parents=True)
    nbformat.write(read(handout / "01_copy.ipynb"), str(labs / "01_copy.ipynb"))
    env = {**os.environ, "OPRT_LABS": str(labs), "OPRT_HANDOUT": str(handout)}
    run = subprocess.run([sys.executable, "-m", "operator_course.lab.validate", "01_copy", "--json",
                          str(tmp_path / "result.json")], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["earned"] == 0 and result["possible"] == visible_points(gpu())
    failed = {c["id"]: c for c in result["checks"] if c["status"] == "failed"}
    assert {"copy-tilelang", "copy-cuda"} <= set(failed)
    assert "NotImplementedError" in failed["copy-tilelang"]["reason"]
    assert "not written yet" in failed["copy-cuda"]["reason"]
    assert "FAILED       copy-tilelang     0 / 3" in run.stdout and "You would earn 0 of the" in run.stdout
    assert_nothing_hidden(run.stdout)
    unknown = subprocess.run([sys.executable, "-m", "operator_course.lab.validate", "09_nope"],
                             capture_output=True, text=True, env=env, timeout=120)
    assert unknown.returncode == 2 and "unknown lab '09_nope'" in unknown.stderr


def test_with_the_handout_only_the_answer_cells_count_as_the_grader_takes_them(tmp_path, monkeypatch, capsys):
    """The solved answers, plus what the grader ignores: a scratch cell that breaks everything
    and a check cell edited to pass; run from a cell, lab.validate(), with no lab named."""
    handout = tmp_path / "handout"
    handout.mkdir()
    nbformat.write(release_notebook(read(LAB)), str(handout / "01_copy.ipynb"))
    nb = student_notebook(read(LAB), parse(ROOT / "tests" / "labs" / "control" / "solved.py"))
    nb.cells.insert(2, nbformat.v4.new_code_cell("raise SystemExit('scratch')"))
    for cell in nb.cells:
        if lab_meta(cell).get("check") == "copy-cuda":
            cell.source = "pass"
    labs = tmp_path / "labs"
    labs.mkdir()
    nbformat.write(nb, str(labs / "01_copy.ipynb"))
    monkeypatch.setenv("OPRT_LABS", str(labs))
    monkeypatch.setenv("OPRT_HANDOUT", str(handout))
    monkeypatch.setenv("JPY_SESSION_NAME", str(labs / "01_copy.ipynb"))  # as JupyterLab sets it for a kernel
    from operator_course import lab

    result = lab.validate()  # a fresh process, its report printed as it comes
    out = capsys.readouterr().out
    assert "as the grader takes them" in out
    assert result.earned == result.possible == visible_points(gpu()) and not result.stopped, out
    assert {c.id for c in result.checks} == {"copy-tilelang", "copy-cuda", "copy-performance"}
    assert_nothing_hidden(out)
