"""Grading stage 2, assemble: the notebook that runs in the student's sandbox. It is built from
the instructor's notebook: its setup cells, the student's answer cells, and, in place of each
check, an export cell that saves what the check judges (export.py). Markdown, solutions and the
checks' own code never reach the sandbox."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import nbformat

from .notebook import lab_meta

KINDS = {"check_tilelang": "tilelang", "check_cuda": "cuda", "check_performance": "performance"}


@dataclass(frozen=True)
class CheckSpec:
    """One graded check of an instructor notebook, read from its cell: ``lab.<fn>(op, answer, ...)``."""
    index: int  # code cell index in the instructor notebook
    id: str
    points: float
    kind: str  # tilelang | cuda | performance
    op: str
    answer: str  # the expression naming the student's answer (``copy_program``, ``CUDA_SOURCE``)
    needs_gpu: bool = False
    hidden: bool = False
    options: dict = field(default_factory=dict)  # name=, fraction=

    @property
    def name(self) -> str:
        """The check's name= (checks.py's default: TileLang, CUDA)."""
        return self.options.get("name") or {"tilelang": "TileLang", "cuda": "CUDA"}.get(self.kind, self.kind)

    @property
    def who(self) -> str:
        """How the check names itself in its messages: ``copy (TileLang)``, as checks.py does."""
        return f"{self.op} ({self.name})"


def check_specs(instructor, label: str) -> list[CheckSpec]:
    """Every graded check; a check cell the grader cannot read is the instructor's error."""
    specs = []
    for index, cell in enumerate(instructor.cells):
        meta = lab_meta(cell)
        if "check" not in meta:
            continue
        where = f"{label}, cell {index} (check {meta['check']!r})"
        try:
            tree = ast.parse(cell.source)
        except SyntaxError as e:
            raise ValueError(f"{where}: {e}") from None
        call = tree.body[0].value if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) else None
        fn = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
        if fn not in KINDS or len(call.args) != 2 or not isinstance(call.args[0], ast.Constant):
            raise ValueError(f"{where}: a check cell is one call lab.check_tilelang|check_cuda|check_performance"
                             f"(op, answer, ...), got {cell.source!r}")
        options = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        specs.append(CheckSpec(index, str(meta["check"]), float(meta.get("points", 1)), KINDS[fn],
                               call.args[0].value, ast.unparse(call.args[1]), meta.get("needs") == "gpu",
                               bool(meta.get("hidden")), options))
    return specs


def answer_ids(instructor) -> list[str]:
    return [str(lab_meta(c)["answer"]) for c in instructor.cells if "answer" in lab_meta(c)]


def export_cell(spec: CheckSpec, dtypes: list[str], gpu: bool) -> str:
    kind = "tilelang" if spec.kind == "tilelang" else "cuda"
    return ("from operator_course.grader.export import save as _oprt_save\n"
            f"_oprt_save({spec.id!r}, {kind!r}, lambda: ({spec.answer}), dtypes={dtypes!r}, gpu={gpu!r}, "
            f"who={spec.who!r}, answer={spec.answer!r})")


def assemble(instructor, answers: dict[str, str], specs: list[CheckSpec], dtypes: list[str], gpu: bool):
    """The sandbox's notebook: instructor setup cells, ``answers`` (id -> source) where the
    answer cells are, export cells where the checks are."""
    by_index = {s.index: s for s in specs}
    cells = []
    for index, cell in enumerate(instructor.cells):
        meta = lab_meta(cell)
        if cell.cell_type != "code":
            continue
        if index in by_index:
            source = export_cell(by_index[index], dtypes, gpu)
        elif "answer" in meta:
            source = answers.get(str(meta["answer"]), "# (no answer submitted)")
        else:
            source = cell.source  # setup: imports and the like, as the student's copy has them
        cells.append(nbformat.v4.new_code_cell(source))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb
