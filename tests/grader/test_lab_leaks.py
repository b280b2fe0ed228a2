"""A lab's answer must not be printed in its own chapter.

The chapters show the step kernels (ops/<op>/steps/) and the production kernels on the public
site; a lab's solution lines found there are an answer a student can copy. A line counts when it
is in the lab's solution regions, in its operator's public sources, and in no other operator's
sources (those are the course's shared idioms: ``@T.prim_func``, ``__syncthreads();``, the
grid-stride step).

The labs ask for variants of what the steps show (lab 1: STEPS tiles per block, a grid-stride
loop unrolled by 4; lab 2: a fixed grid walking the tiles in float32 fragments; lab 3: ROWS rows
per block, an unrolled butterfly reduction) and give the interface (the prim_func's signature,
``return <op>``, a CUDA kernel's row pointers) outside the solution regions. KNOWN holds how many
lines each lab still shares, all idioms of their kind (``for i in T.Parallel(TILE):``,
``T.fill(m, LOWEST)``, the final ``y[blockIdx.x] = T(total)``): the test fails when a lab shares
more (naming the lines), and when it shares fewer (lower KNOWN then, so the count only goes down).
A line counts wherever it occurs in the public text, also inside a longer line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("nbformat", reason="reading the labs needs nbformat (requirements.txt)")

from operator_course.grader.notebook import read, solution_lines  # noqa: E402
from operator_runtime_testing.operators import OPERATORS, lab_id  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {".py", ".cu", ".cc", ".h", ".cuh"}
# lab -> solution lines its chapter shows today (see the module's docstring); only ever lowered
KNOWN = {"copy": 1, "vector_add": 1, "reduce_sum": 1, "softmax": 1, "matmul": 0}


def public_sources(op: str) -> str:
    """The kernels ``op``'s chapter shows: its steps and its production kernels."""
    folder = ROOT / "ops" / op
    return "\n".join(p.read_text() for p in sorted(folder.rglob("*")) if p.suffix in SOURCES)


def leaked(op: str) -> list[str]:
    secret = dict.fromkeys(line for cell in read(ROOT / "labs" / f"{lab_id(op)}.ipynb").cells
                           for line in solution_lines(cell.source))
    own = public_sources(op)
    shared = "\n".join(public_sources(other) for other in OPERATORS if other != op)
    return [line for line in secret if line in own and line not in shared]


@pytest.mark.parametrize("op", list(OPERATORS))
def test_a_labs_solution_is_not_in_its_chapters_kernels(op):
    lines = leaked(op)
    known = KNOWN.get(op, 0)
    assert len(lines) <= known, (f"labs/{lab_id(op)}.ipynb: {len(lines)} solution lines are in ops/{op}/ (public in "
                                 f"the chapter), {known} known: " + "; ".join(lines))
    assert len(lines) == known, (f"labs/{lab_id(op)}.ipynb now shares {len(lines)} solution lines with ops/{op}/: "
                                 f"lower KNOWN[{op!r}] in tests/grader/test_lab_leaks.py to {len(lines)}")
