"""The lab release is strict: a solution marker it cannot trust stops it (file, cell, line), its
leak check finds solutions without the stripping code, and its CLI refuses bad arguments with
exit 2 and a message. Small notebooks built here; the real labs are in test_labs.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from operator_course.grader import release as release_module
from operator_course.grader.notebook import (SOLUTION_BEGIN, SOLUTION_END, STUB, MarkerError, solution_lines,
                                             strip_solutions)
from operator_course.grader.release import LeakError, release, release_notebook, secret_lines

ROOT = Path(__file__).resolve().parents[2]
SECRET = "result = compute_the_answer(x)"
SOLVED = f"# your answer\ndef f(x):\n    {SOLUTION_BEGIN}\n    {SECRET}\n    return result\n    {SOLUTION_END}\n"


def notebook(answer: str = SOLVED):
    """An instructor notebook: setup, one answer cell, a check and a hidden check."""
    nb = nbformat.v4.new_notebook(metadata={"lab": {"id": "01_tiny"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# A tiny lab"),
                nbformat.v4.new_code_cell(answer, metadata={"lab": {"answer": "f"}}),
                nbformat.v4.new_code_cell("assert f(1) == 2", metadata={"lab": {"check": "f", "points": 1}}),
                nbformat.v4.new_code_cell("assert f(2) == 3",
                                          metadata={"lab": {"check": "f-again", "points": 1, "hidden": True}})]
    return nb


def labs_folder(tmp_path: Path, answer: str = SOLVED) -> Path:
    labs = tmp_path / "labs"
    labs.mkdir()
    nbformat.write(notebook(answer), str(labs / "01_tiny.ipynb"))
    return labs


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "operator_course.grader.release", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


# --- markers ---------------------------------------------------------------------------------

def test_well_formed_regions_become_stubs_indented_as_begin():
    source = (f"a = 1\n{SOLUTION_BEGIN}\nb = 2\n{SOLUTION_END}\n"
              f"def g():\n\t{SOLUTION_BEGIN}\n\treturn some_long_value\n\t{SOLUTION_END}\nc = 3")
    assert strip_solutions(source) == f"a = 1\n{STUB}\ndef g():\n\t{STUB}\nc = 3"
    assert strip_solutions(SOLVED) == f"# your answer\ndef f(x):\n    {STUB}\n"
    assert solution_lines(source) == ["return some_long_value"]
    assert strip_solutions("x = 1  # no markers") == "x = 1  # no markers"


@pytest.mark.parametrize("marker", ["### END SOLUTOIN", "###END SOLUTION", "## END SOLUTION", "### end solution",
                                    "#### END SOLUTION", "### END SOLUTION ###", "### END OF SOLUTION"])
def test_a_near_miss_end_marker_is_an_error(marker):
    source = f"def f(x):\n    {SOLUTION_BEGIN}\n    {SECRET}\n    {marker}\n"
    with pytest.raises(MarkerError, match=rf"labs/x.ipynb, cell 3, line 4: .*{marker}.*looks like a solution marker"):
        strip_solutions(source, "labs/x.ipynb, cell 3")


@pytest.mark.parametrize("marker", ["# BEGIN SOLUTION", "### begin solution", "###BEGIN  SOLUTION"])
def test_a_near_miss_begin_marker_is_an_error(marker):
    with pytest.raises(MarkerError, match=r"cell 1, line 1: .*looks like a solution marker"):
        strip_solutions(f"{marker}\n{SECRET}\n{SOLUTION_END}", "nb, cell 1")


@pytest.mark.parametrize("source, problem", [
    (f"x = 1\n{SOLUTION_BEGIN}\n{SECRET}\n", r"line 2: '### BEGIN SOLUTION' has no '### END SOLUTION' after it"),
    (f"{SOLUTION_BEGIN}\n  {SOLUTION_BEGIN}\n{SECRET}\n{SOLUTION_END}\n",
     r"line 2: '### BEGIN SOLUTION' inside the region opened at line 1"),
    (f"{SECRET}\n{SOLUTION_END}\n", r"line 2: '### END SOLUTION' without a '### BEGIN SOLUTION' before it"),
])
def test_unbalanced_markers_are_errors(source, problem):
    with pytest.raises(MarkerError, match=rf"^nb, cell 0, {problem}$"):
        strip_solutions(source, "nb, cell 0")
    with pytest.raises(MarkerError):
        solution_lines(source)


def test_ordinary_comments_mentioning_the_words_pass():
    comments = "# endpoints are resolved below\n# solve for the end of the row\n"
    assert strip_solutions(f"{comments}{SOLUTION_BEGIN}\n{SECRET}\n{SOLUTION_END}") == f"{comments}{STUB}\n"


# --- the release -----------------------------------------------------------------------------

def test_release_names_file_cell_and_line_of_a_bad_marker(tmp_path):
    labs = labs_folder(tmp_path, SOLVED.replace(SOLUTION_END, "### END SOLUTOIN"))
    with pytest.raises(MarkerError, match=r"01_tiny.ipynb, cell 1, line 6: '### END SOLUTOIN'"):
        release(labs, tmp_path / "out")
    assert not (tmp_path / "out").exists(), "a failed release must write nothing"


def test_release_strips_solutions_and_hidden_checks():
    student = release_notebook(notebook())
    assert [c.metadata.get("lab", {}).get("check") for c in student.cells] == [None, None, "f"]
    assert student.cells[1].source == strip_solutions(SOLVED)
    assert secret_lines(notebook()) == {SECRET, "return result"}


@pytest.mark.parametrize("end", [SOLUTION_END, "### END SOLUTOIN", "### ED SOLUTION", ""])
def test_leak_check_does_not_trust_the_stripping_code(monkeypatch, end):
    """With stripping that strips nothing (a fault in it, or a marker it failed to see), the
    leak check still finds the solution, whatever became of the END marker."""
    monkeypatch.setattr(release_module, "strip_solutions", lambda source, where="": source)
    answer = SOLVED.replace(SOLUTION_END, end)
    with pytest.raises(LeakError, match=r"01_tiny: solution text survived the release: \['result = compute"):
        release_notebook(notebook(answer), label="01_tiny")


def test_leak_check_allows_shared_code_after_a_region(monkeypatch):
    answer = f"def f(x):\n    {SOLUTION_BEGIN}\n    {SECRET}\n    {SOLUTION_END}\n    return result_for_everyone"
    assert secret_lines(notebook(answer)) == {SECRET}
    assert "return result_for_everyone" in release_notebook(notebook(answer)).cells[1].source


# --- the command line ------------------------------------------------------------------------

def test_cli_releases_a_folder(tmp_path):
    labs = labs_folder(tmp_path)
    result = cli("labs", "-o", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "released out/01_tiny.ipynb" in result.stdout
    assert SECRET not in (tmp_path / "out" / "01_tiny.ipynb").read_text()
    assert SECRET in (labs / "01_tiny.ipynb").read_text()


@pytest.mark.parametrize("args, message", [
    (["labs/01_tiny.ipynb", "-o", "out"], "labs/01_tiny.ipynb is not a folder"),
    (["missing", "-o", "out"], "missing is not a folder"),
    (["empty", "-o", "out"], "empty holds no notebooks"),
    (["labs", "-o", "afile"], "--out afile is a file, not a folder"),
    (["labs", "-o", "labs/"], "--out must differ from the instructor folder"),
    (["labs", "-o", "out", "--sight"], "unrecognized arguments: --sight"),
    (["labs"], "the following arguments are required: -o/--out"),
])
def test_cli_refuses_bad_arguments(tmp_path, args, message):
    labs_folder(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("not a folder")
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


def test_cli_reports_a_bad_marker_without_a_traceback(tmp_path):
    labs_folder(tmp_path, SOLVED.replace(f"    {SOLUTION_END}\n", ""))
    result = cli("labs", "-o", "out", cwd=tmp_path)
    assert result.returncode == 2
    assert "error: labs/01_tiny.ipynb, cell 1, line 3: '### BEGIN SOLUTION' has no '### END SOLUTION'" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_does_not_import_torch(tmp_path):
    """--help is instant: nothing on the way to it imports torch (seconds), nor needs it."""
    probe = ("import sys\n"
             "from operator_course.grader.release import main\n"
             "try:\n    main(['--help'])\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
             "print('torch imported:', 'torch' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout
    assert "torch imported: False" in result.stdout


def test_the_lab_package_still_offers_the_checks():
    from operator_course import lab

    assert callable(lab.check_tilelang) and "check_cuda" in dir(lab)
    with pytest.raises(AttributeError):
        lab.no_such_check


@pytest.mark.parametrize("path", sorted((ROOT / "labs").glob("*.ipynb")), ids=lambda p: p.stem)
def test_a_cuda_starter_compiles_and_says_the_kernel_is_not_written(path):
    """The released CUDA answer is whole CUDA (the kernel's opening, the body marker, its closing
    braces): the check says the kernel is not written yet instead of what nvcc makes of half a
    template, and without the marker the starter compiles as it is."""
    from operator_course import lab
    from operator_course.cuda import cuda_build
    from operator_course.lab.starter import NOT_WRITTEN

    student = release_notebook(nbformat.read(str(path), 4), label=str(path))
    cells = [c for c in student.cells if c.cell_type == "code" and "CUDA_SOURCE" in c.source
             and str(c.metadata.get("lab", {}).get("answer", "")).endswith("-cuda")]
    assert len(cells) == 1, f"{path.name}: expected one CUDA answer cell"
    answer = cells[0].metadata["lab"]["answer"]
    namespace: dict = {}
    exec(cells[0].source, namespace)  # handed out as it is, the cell runs
    source, op = namespace["CUDA_SOURCE"], answer.rsplit("-", 1)[0]
    with pytest.raises(AssertionError, match="your kernel is not written yet"):
        lab.check_cuda(op, source)
    try:
        cuda_build.compile_check(op, source.replace(NOT_WRITTEN, ""))
    except cuda_build.NoCompiler as e:
        pytest.skip(f"nvcc is not installed: {e}")
