"""README's "Adding a new operator" is the whole list of files a new operator touches.

Three checks, each failing with the file to fix:
- every operator has each per-operator file the README names (``<name>`` replaced by the op);
- each file the README says names every operator names each one;
- no other file keeps a table of operators: a file that names three or more operators in
  quotes or paths ("softmax", 'matmul', ops/reduce_sum, 04_softmax) is one, unless it is below
  (tests and scripts about particular operators' behaviour, which a new operator does not join).
A table the README does not list would be a place a new operator is silently left out of. A
list of one or two operators (a kind's: element-wise, rows) is below the threshold: the records'
``kind`` is where such lists come from.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from operator_runtime.ops import OPS
from operator_runtime_testing.operators import OPERATORS, lab_id

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
SECTION = README[README.index("## Adding a new operator"):README.index("## Production mapping")]
EVERY = SECTION[SECTION.index("These files name every operator"):SECTION.index("Only where the operator needs them")]
OPTIONAL = SECTION[SECTION.index("Only where the operator needs them"):]
PATH = re.compile(r"`([\w./<>-]+(?:/|\.\w+))`")  # `ops/<name>/<name>.h`, `_toc.yml`, `ops/<name>/steps/`

# Per-operator files only some operators have: (the record's condition, what it means).
CONDITIONAL = {
    "ops/<name>/tilelang/<name>.py": lambda r: bool(r.signature.tilelang),  # SIGNATURE's tilelang=
    "ops/<name>/steps/": lambda r: r.has_steps,                             # the record's production=
    "tests/bench/<name>.py": lambda r: r.kind in ("matmul", "attention"),   # shapes (M, N, K), (B, H, Sq, Sk, D)
}
# Files that name every operator of which only some apply.
EVERY_ONLY_FOR = {"tests/runtime/test_tilelang_compile.py": lambda r: bool(r.signature.tilelang)}
# Files that name several operators without being a table of them: a new operator is not added there.
NOT_TABLES = {
    "tests/runtime/test_c_contract.py": "per-op C-contract tests (copy across backends, softmax's and matmul's workspace)",
    "tests/runtime/test_plan_cache.py": "the plan cache exercised through a few ops",
    "tests/grader/test_lab_feedback.py": "the feedback of particular mistakes in particular labs",
    "tests/grader/test_cpu_tiles.py": "TileLang's CPU tile emulation on particular programs",
    "tests/runtime/ops/test_opinfo.py": "torch's OpInfo samples of softmax, sum, add and matmul",
    "tests/runtime/ops/test_kernel_strategies.py": "the OPRT_<OP>_STRATEGY overrides of the nvidia kernels that have them",
    "tests/grader/test_lab_leaks.py": "KNOWN counts today's leaks of some labs; a new operator's is 0, its default",
    "tests/book/test_lesson_figures.py": "the step charts and diagrams of particular chapters",
    "tests/runtime/ops/test_tilelang_layouts.py": "which tilelang kernel particular layouts of some ops pick",
    "tests/runtime/test_timing_harness.py": "the timing harness's verification, on honest kernels of a few ops",
    "tests/runtime/test_sweep.py": "the sweep's drawing and checks, on particular ops' categories (the ops come from OPERATORS)",
    "tests/book/test_sweep_chart.py": "the sweep chart drawn from synthetic rows of a few ops",
    "tests/grader/test_speed_estimate.py": "the laptop speed estimate on the labs' solutions and slow variants of particular labs",
}
# Not code: prose, data, the labs' notebooks and fixtures, each operator's own folder, this record.
SKIP_PREFIXES = ("data/", "book/", "labs/", "tests/labs/", "ops/", "python/operator_runtime_testing/operators/",
                 "python/operator_course/hosting/kubernetes/", ".github/")
SKIP_SUFFIXES = (".md", ".ipynb", ".json", ".svg", ".png", ".txt", ".csv", ".lock")


def paths(text: str) -> list[str]:
    return PATH.findall(text)


def per_op_paths() -> list[str]:
    return [p for p in paths(SECTION) if "<name>" in p]


def expand(path: str, op: str) -> str:
    return path.replace("NN_<name>", lab_id(op)).replace("<name>", op)


def names(text: str, op: str) -> bool:
    return re.search(rf"(?<![A-Za-z]){op}(?![A-Za-z])", text) is not None


# an operator named as a whole quoted string or a path part: "softmax", 'matmul', ops/copy/, 04_softmax
# (not "copy ceiling", "softmax-f16" or ort.softmax(...))
QUOTED = {op: re.compile(rf"(?<=[\"'/]){op}(?=[\"'/.])|\b\d\d_{op}\b") for op in OPS}


def table_of(text: str) -> list[str]:
    """The operators ``text`` names as a table does (in quotes or paths), if three or more; else []."""
    named = [op for op in OPS if QUOTED[op].search(text)]
    return named if len(named) >= 3 else []


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("needs a git checkout (the list of the repository's files)")
    return sorted(set(out.split()))


def test_the_section_lists_files():
    assert len(per_op_paths()) >= 10 and len(paths(EVERY)) >= 8, "README's 'Adding a new operator' lost its lists"


def test_the_records_are_the_runtimes_operators():
    assert list(OPERATORS) == list(OPS)
    on_disk = sorted(p.stem for p in (ROOT / "python/operator_runtime_testing/operators").glob("*.py")
                     if p.stem not in ("__init__", "record"))
    assert on_disk == sorted(OPS), ("a record in operators/ for an op the runtime does not have (or the reverse): "
                                    "add it to python/operator_runtime/ops/__init__.py's OPS")


@pytest.mark.parametrize("op", OPS)
def test_each_operator_has_the_files_the_readme_lists(op):
    record = OPERATORS[op]
    for template in per_op_paths():
        path = ROOT / expand(template, op)
        wanted = CONDITIONAL.get(template, lambda r: True)(record)
        if wanted:
            assert path.exists(), f"{op}: README's 'Adding a new operator' lists {template}: write {path.relative_to(ROOT)}"
        else:
            assert not path.exists(), (f"{op}: {path.relative_to(ROOT)} exists but its record says otherwise: "
                                        f"set it in operator_runtime/ops/{op}.py's SIGNATURE (tilelang=) or in "
                                        f"operators/{op}.py (production=)")


@pytest.mark.parametrize("path", paths(EVERY))
def test_each_file_that_names_every_operator_names_each(path):
    text = (ROOT / path).read_text()
    only = EVERY_ONLY_FOR.get(path, lambda r: True)
    missing = [op for op, r in OPERATORS.items() if only(r) and not names(text, op)]
    assert not missing, f"{path} names every operator (README's 'Adding a new operator') but not {missing}: add them"


def test_the_optional_files_exist():
    for path in paths(OPTIONAL):
        if "<name>" in path:  # a per-operator file (CONDITIONAL): test_each_operator_has_the_files_the_readme_lists
            continue
        assert (ROOT / path).is_file(), f"README's 'Adding a new operator' names {path}, which does not exist"


def test_no_other_file_keeps_a_table_of_operators():
    listed = set(paths(EVERY)) | set(paths(OPTIONAL)) | {expand(p, op) for p in per_op_paths() for op in OPS}
    listed |= {"README.md", "tests/test_adding_an_operator.py", "_toc.yml", "course.toml"}
    tables = []
    for path in tracked_files():
        if path in listed or path in NOT_TABLES or path.startswith(SKIP_PREFIXES) or path.endswith(SKIP_SUFFIXES):
            continue
        try:
            text = (ROOT / path).read_text()
        except (UnicodeDecodeError, OSError):
            continue
        named = table_of(text)
        if named:
            tables.append(f"{path} names {named}")
    assert not tables, (
        "These files look like tables with a row per operator:\n  " + "\n  ".join(tables) + "\n"
        "Move those facts into each operator's record (python/operator_runtime_testing/operators/<op>.py) and "
        "read them from there (operator_runtime_testing.operators.OPERATORS); or, if every operator must be "
        "named in the file, list it in README.md's 'Adding a new operator' (the paragraph 'These files name "
        "every operator'); or, if it only exercises some operators' behaviour, add it to NOT_TABLES in "
        "tests/test_adding_an_operator.py with the reason.")


def test_each_exception_still_names_several_operators():
    stale = [path for path in NOT_TABLES if not (ROOT / path).is_file() or not table_of((ROOT / path).read_text())]
    assert not stale, f"NOT_TABLES lists files that no longer name three operators (or are gone): remove {stale}"


def test_a_stale_table_is_caught():
    """The detector itself: a table that left the last operator out is still a table; prose and
    calls naming an operator or two are not."""
    stale = "SHAPES = {" + ", ".join(f"{op!r}: ()" for op in OPS[:-1]) + "}"
    assert table_of(stale) == list(OPS[:-1])
    assert table_of(f"labs = ['{lab_id(OPS[0])}', '{lab_id(OPS[1])}', '{lab_id(OPS[2])}']") == list(OPS[:3])
    assert table_of(f"y = ort.{OPS[1]}(x, x)  # like {OPS[2]} and {OPS[3]}, then {OPS[0]}") == []
