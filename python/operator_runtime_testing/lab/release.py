"""Write the student versions of the instructor labs.

    python -m operator_runtime_testing.lab.release labs/ -o _build/labs-release

Solutions become stubs raising NotImplementedError, hidden checks are removed, outputs are
cleared (a student sees a fresh notebook), and each released notebook is checked to hold no
solution line before it is written.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import nbformat

from .notebook import instructor_labs, lab_meta, read, solution_lines, strip_solutions


def release_notebook(nb):
    student = copy.deepcopy(nb)
    student.cells = [c for c in student.cells if not lab_meta(c).get("hidden")]
    for cell in student.cells:
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source)
            cell.outputs, cell.execution_count = [], None
    leaked = [line for c in nb.cells for line in solution_lines(c.source)
              if any(line in s.source for s in student.cells)]
    if leaked:
        raise RuntimeError(f"solution text survived the release: {leaked[:3]}")
    return student


def release(labs: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for lab, path in instructor_labs(labs).items():
        target = out / path.name
        nbformat.write(release_notebook(read(path)), str(target))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("labs", type=Path, help="folder of instructor notebooks")
    parser.add_argument("-o", "--out", type=Path, required=True, help="folder for the student versions")
    args = parser.parse_args(argv)
    if args.out.resolve() == args.labs.resolve():
        parser.error("--out must differ from the instructor folder (the release would overwrite solutions)")
    for path in release(args.labs, args.out):
        print(f"released {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
