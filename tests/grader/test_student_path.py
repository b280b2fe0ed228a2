"""The student path the README and getting_started give, followed as a student would from the
checkout: `make handout` writes the labs without solutions or hidden checks into handout/, every
chapter link there resolves, and a lab runs from there up to the first cell the student has to
write. For the hub's copies (outside the checkout) the links point at the served site."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from operator_course.grader.notebook import lab_meta
from operator_course.grader.release import release_notebook, secret_lines

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def student_path_commands() -> list[str]:
    """The two commands the README gives a student, as written there."""
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"Students: `(make [\w-]+)`, then `([^`]+)`", readme)
    assert found, "README.md no longer gives the student path as 'Students: `make ...`, then `...`'"
    return [found[1], found[2]]


@pytest.fixture(scope="module")
def handout():
    """Runs what the README's `make handout` runs: the target's release line, as `make -n` prints
    it (not make itself: its prerequisites would reinstall the package under this test run)."""
    make, lab = student_path_commands()
    assert lab.endswith("jupyter lab handout/"), lab
    planned = subprocess.run([*make.split(), "-n"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    release = [line for line in planned.splitlines() if "operator_course.grader.release" in line]
    assert len(release) == 1, planned
    subprocess.run(release[0], shell=True, cwd=ROOT, check=True, capture_output=True, timeout=600)
    return ROOT / "handout"


def test_the_handout_holds_no_solution_and_no_hidden_check(handout):
    instructor = {p.name: nbformat.read(str(p), 4) for p in (ROOT / "labs").glob("*.ipynb")}
    assert instructor and sorted(p.name for p in handout.glob("*.ipynb")) == sorted(instructor)
    assert any(lab_meta(c).get("hidden") for nb in instructor.values() for c in nb.cells), "no lab has a hidden check"
    for name, nb in instructor.items():
        given = "\n".join(c.source for c in nbformat.read(str(handout / name), 4).cells)
        leaked = [line for line in secret_lines(nb) if line in given]
        assert not leaked, f"{name}: {leaked[:3]}"
        hidden = [c.source for c in nb.cells if lab_meta(c).get("hidden")]
        assert not any(h in given for h in hidden), f"{name}: a hidden check was handed out"


def test_every_chapter_link_in_the_handout_resolves(handout):
    broken = []
    for path in handout.glob("*.ipynb"):
        for cell in nbformat.read(str(path), 4).cells:
            for target in LINK.findall(cell.source):
                if "://" in target or target.startswith("#"):
                    continue
                if not (handout / target.split("#")[0]).resolve().is_file():
                    broken.append(f"{path.name}: {target}")
    assert not broken, broken


def test_a_lab_runs_from_the_handout_until_the_students_first_answer(handout):
    nb = nbformat.read(str(handout / "01_copy.ipynb"), 4)
    with pytest.raises(CellExecutionError) as stopped:
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(handout)}}).execute()
    assert "NotImplementedError" in str(stopped.value) and "your code here" in str(stopped.value)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and lab_meta(c).get("answer"))
    ran = [c for c in nb.cells[:first] if c.cell_type == "code"]
    assert ran and all(not any(o.get("output_type") == "error" for o in c.outputs) for c in ran)


def test_the_hubs_copies_link_to_the_served_site():
    nb = nbformat.read(str(ROOT / "labs" / "04_softmax.ipynb"), 4)
    student = release_notebook(nb, chapters="/services/site/")
    links = [t for c in student.cells if c.cell_type == "markdown" for t in LINK.findall(c.source)]
    assert "/services/site/book/ops/softmax.html" in links, links
    assert not [t for t in links if "../book/" in t], links
    assert (ROOT / "book" / "ops" / "softmax.md").is_file()  # the page that link publishes


def test_a_handout_written_outside_the_checkout_links_back_to_its_book(tmp_path):
    """`release labs -o /somewhere/else`: the chapter links point at this checkout's book/ from there
    (a blind student's handout in /tmp had every chapter link broken)."""
    from operator_course.grader.release import release

    written = release(ROOT / "labs", tmp_path / "deep" / "handout")
    links = [(path, t) for path in written for c in nbformat.read(str(path), 4).cells if c.cell_type == "markdown"
             for t in LINK.findall(c.source) if "://" not in t and not t.startswith("#")]
    assert any("book/ops/" in t for _, t in links), links
    broken = [t for path, t in links if not (path.parent / t.split("#")[0]).resolve().is_file()]
    assert not broken, broken
