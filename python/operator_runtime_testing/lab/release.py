"""Write the student versions of the instructor labs.

    python -m operator_runtime_testing.lab.release labs/ -o _build/labs-release
    python -m operator_runtime_testing.lab.release labs/ -o book/labs --site   # the course site's copies

Solutions become stubs raising NotImplementedError, hidden checks are removed, outputs are
cleared (a student sees a fresh notebook), and each released notebook is checked to hold no
solution line before it is written. ``--site`` writes the copies the course site renders:
links to chapters are made relative to book/labs/ instead of labs/.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import nbformat

from .notebook import instructor_labs, lab_meta, read, solution_lines, strip_solutions


def release_notebook(nb, site: bool = False):
    student = copy.deepcopy(nb)
    student.cells = [c for c in student.cells if not lab_meta(c).get("hidden")]
    for cell in student.cells:
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source)
            cell.outputs, cell.execution_count = [], None
        elif site:  # labs/X.ipynb links ../book/ops/Y.md; the site's copy lives in book/labs/
            cell.source = cell.source.replace("](../book/", "](../")
    leaked = [line for c in nb.cells for line in solution_lines(c.source)
              if any(line in s.source for s in student.cells)]
    if leaked:
        raise RuntimeError(f"solution text survived the release: {leaked[:3]}")
    return student


def release(labs: Path, out: Path, site: bool = False) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for lab, path in instructor_labs(labs).items():
        target = out / path.name
        nbformat.write(release_notebook(read(path), site), str(target))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("labs", type=Path, help="folder of instructor notebooks")
    parser.add_argument("-o", "--out", type=Path, required=True, help="folder for the student versions")
    parser.add_argument("--site", action="store_true", help="links for the copies in book/labs/")
    args = parser.parse_args(argv)
    if args.out.resolve() == args.labs.resolve():
        parser.error("--out must differ from the instructor folder (the release would overwrite solutions)")
    for path in release(args.labs, args.out, args.site):
        print(f"released {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
