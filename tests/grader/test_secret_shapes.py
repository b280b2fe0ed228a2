"""The grader's own lab shapes live on the instructor's side (labs/secret_shapes.py), out of the
installed package a student can read: a cheater who knew their ranges capped a kernel just past
them and scored full marks. The draw reaches past every public shape, changes with the grader's
seed, and a malformed file stops the grader with the file's name."""

from __future__ import annotations

import random
from pathlib import Path

import nbformat
import pytest

from operator_course.grader import grade, secret_shapes
from operator_course.lab.judge import lab_cases
from operator_runtime_testing.operators import OPERATORS, get, lab_id

ROOT = Path(__file__).resolve().parents[2]
LABS = ROOT / "labs"
LAB_OPS = sorted(op for op in OPERATORS if (LABS / f"{lab_id(op)}.ipynb").exists())


def test_no_installed_module_holds_the_draw():
    for op in LAB_OPS:
        assert not hasattr(get(op), "secret_shapes"), f"{op}'s record (installed) still carries the grader's shapes"
    installed = [p for p in (ROOT / "python").rglob("*.py") if "SECRET_SHAPES = " in p.read_text()]
    assert not installed, f"the grader's shape table is in the installed package: {installed}"


@pytest.mark.parametrize("op", LAB_OPS)
def test_the_draw_reaches_past_every_public_shape(op):
    draw = secret_shapes.load(secret_shapes.default_path(LABS), [op])[op]
    public = get(op).lab_shapes
    for seed in range(20):
        drawn = draw(random.Random(seed))
        beyond = [axis for axis in range(len(public[0]))
                  if max(s[axis] for s in drawn) > max(p[axis] for p in public)]
        assert beyond, f"{op}: seed {seed} drew {drawn}, inside the public shapes {public} on every axis"
    assert len({draw(random.Random(seed)) for seed in range(20)}) > 10, f"{op}: the draw hardly depends on the seed"


def test_the_grader_adds_them_and_the_notebook_does_not():
    draw = secret_shapes.load(secret_shapes.default_path(LABS), ["vector_add"])["vector_add"]
    graded = {c.shape for c in lab_cases("vector_add", "cpu", seed=5, secret=draw)}
    notebook = {c.shape for c in lab_cases("vector_add", "cpu", seed=5)}
    assert notebook < graded and all(s[0] > 1 << 22 for s in graded - notebook)


@pytest.mark.parametrize("text, says", [
    ("SECRET_SHAPES = {}\n", "no draw for vector_add"),
    ("X = 1\n", "defines no SECRET_SHAPES"),
    ("SECRET_SHAPES = {'vector_add': lambda rng: ((3, 4),)}\n", "vector_add's draw must return shapes of 1 sizes"),
    ("SECRET_SHAPES = {'vector_add': lambda rng: rng.nope()}\n", "vector_add's draw fails: AttributeError"),
    ("SECRET_SHAPES = {\n", "SyntaxError"),
])
def test_a_malformed_file_stops_the_grader_naming_it(tmp_path, capsys, text, says):
    labs = tmp_path / "labs"
    labs.mkdir()
    (labs / "02_vector_add.ipynb").write_bytes((LABS / "02_vector_add.ipynb").read_bytes())
    (labs / "secret_shapes.py").write_text(text)
    (tmp_path / "class").mkdir()
    assert grade.main([str(tmp_path / "class"), "--labs", str(labs), "-o", str(tmp_path / "out"),
                       "--unsafe-no-sandbox", "--per-process-limits"]) == 2
    err = capsys.readouterr().err
    assert str(labs / "secret_shapes.py") in err and says in err, err


def test_a_missing_file_stops_the_grader_unless_told_to_grade_on_public_shapes(tmp_path, capsys):
    labs = tmp_path / "labs"
    labs.mkdir()
    (labs / "02_vector_add.ipynb").write_bytes((LABS / "02_vector_add.ipynb").read_bytes())
    (tmp_path / "class").mkdir()
    argv = [str(tmp_path / "class"), "--labs", str(labs), "-o", str(tmp_path / "out"), "--unsafe-no-sandbox",
            "--per-process-limits"]
    assert grade.main(argv) == 2
    assert "no " + str(labs / "secret_shapes.py") in capsys.readouterr().err
    assert grade.main(argv + ["--no-secret-shapes"]) == 0
    assert "--no-secret-shapes: the checks draw only the public lab shapes" in capsys.readouterr().err
    import json

    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["secret_shapes"] is None


def test_a_release_carries_no_shape_table(tmp_path):
    from operator_course.grader.release import release

    nb = nbformat.v4.new_notebook(metadata={"lab": {"id": "01_tiny"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# A tiny lab")]
    labs = tmp_path / "labs"
    labs.mkdir()
    nbformat.write(nb, str(labs / "01_tiny.ipynb"))
    (labs / "secret_shapes.py").write_text("SECRET_SHAPES = {}\n")
    release(labs, tmp_path / "handout")
    assert sorted(p.name for p in (tmp_path / "handout").iterdir()) == ["01_tiny.ipynb"]
    site = ROOT / "_build" / "html"
    if site.is_dir():  # the built course site (make book) serves nothing of it either
        assert not [p for p in site.rglob("*") if p.is_file() and p.suffix in (".html", ".py", ".txt", ".ipynb")
                    and b"SECRET_SHAPES" in p.read_bytes()]


def test_attention_draws_a_sequence_past_1024_keys():
    """A kernel that stopped at a round 1024 keys would have passed when no drawn S reached 900 (a red-team
    review, 2026-12-08): every draw now holds a sequence longer than that."""
    draw = secret_shapes.load(secret_shapes.default_path(LABS), ["scaled_dot_product_attention"])
    for seed in range(20):
        shapes = draw["scaled_dot_product_attention"](random.Random(seed))
        assert max(s[2] for s in shapes) > 1024, f"seed {seed} drew {shapes}"
