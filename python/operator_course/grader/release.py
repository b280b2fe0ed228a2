"""Write the student versions of the instructor labs.

    python -m operator_course.grader.release labs/ -o handout/           # `make handout`: a student's copies
    python -m operator_course.grader.release labs/ -o book/labs --site   # the course site's copies
    python -m operator_course.grader.release labs/ -o /srv/handout --chapters https://course.example/site

Solutions become stubs raising NotImplementedError, hidden checks are removed, outputs are
cleared (a student sees a fresh notebook). A solution marker that is misspelled, nested or left
open stops the release, naming file, cell and line, before anything is written. Each released
notebook is then checked to hold no solution line, found in the instructor notebook without the
stripping code, so a fault in that code cannot hide its own leak. ``--site`` writes the copies
the course site renders: links to chapters are made relative to book/labs/ instead of labs/.
``--chapters URL`` points the links at the published site (``URL/book/ops/copy.html``), for a
handout that lives outside the repository (a student's ~/labs on the hub). Without either, the
links point at this checkout's book/ from wherever the copies are written (``../book/`` for a folder
beside labs/, such as ``handout/``).
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import sys
from pathlib import Path

import nbformat

from .notebook import MarkerError, instructor_labs, lab_meta, read, strip_solutions

# How the leak check finds solutions: loosely on purpose, and not with the stripping code's
# parser. A comment mentioning "begin" then "sol" opens a secret region, one mentioning "end"
# then "sol" closes it, in any case or spacing ("### END SOLUTOIN" closes); a region never
# closed runs to the end of its cell. A mangled END thus makes the check stricter, never blind.
_OPENS = re.compile(r"begin.*sol", re.I)
_CLOSES = re.compile(r"end.*sol", re.I)


class LeakError(RuntimeError):
    """Solution text survived the release."""


def secret_lines(nb) -> set[str]:
    """The solution lines of an instructor notebook: the non-comment lines of 12 characters or
    more (shorter ones, like `return out`, are common code) inside its marked regions."""
    secret = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        inside = False
        for line in cell.source.split("\n"):
            text = line.strip()
            if text.startswith("#"):
                inside = (inside and not _CLOSES.search(text)) or bool(_OPENS.search(text))
            elif inside and len(text) >= 12:
                secret.add(text)
    return secret


CHAPTER_LINK = re.compile(r"\]\(\.\./book/([^)#]+)\.md(#[^)]*)?\)")


def release_notebook(nb, site: bool = False, label: str = "<notebook>", chapters: str | None = None,
                     book: str = "../book"):
    """The student version of one instructor notebook; ``label`` names it in errors; ``chapters``:
    the site's URL, which chapter links then point at (see the module's docstring); ``book``: else the
    path from the copy's folder to the book/ folder."""
    student = copy.deepcopy(nb)
    # cells keep their instructor-notebook index in errors, the one an instructor sees
    kept = [(i, c) for i, c in enumerate(student.cells) if not lab_meta(c).get("hidden")]
    for i, cell in kept:
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source, f"{label}, cell {i}")
            cell.outputs, cell.execution_count = [], None
        elif site:  # labs/X.ipynb links ../book/ops/Y.md; the site's copy lives in book/labs/
            cell.source = cell.source.replace("](../book/", "](../")
        elif chapters:  # the published page of ../book/ops/Y.md is book/ops/Y.html
            base = chapters.rstrip("/")
            cell.source = CHAPTER_LINK.sub(lambda m: f"]({base}/book/{m[1]}.html{m[2] or ''})", cell.source)
        elif book != "../book":  # copies elsewhere than beside labs/ (a blind student's /tmp/.../handout)
            cell.source = cell.source.replace("](../book/", f"]({book}/")
    student.cells = [c for _, c in kept]
    leaked = sorted(line for line in secret_lines(nb) if any(line in c.source for c in student.cells))
    if leaked:
        raise LeakError(f"{label}: solution text survived the release: {leaked[:3]}")
    return student


def release(labs: Path, out: Path, site: bool = False, chapters: str | None = None) -> list[Path]:
    # every notebook is released in memory first: a bad marker in the last lab leaves no
    # half-written release behind
    book = Path(os.path.relpath(labs.resolve().parent / "book", out.resolve())).as_posix()
    students = {path: release_notebook(read(path), site, str(path), chapters, book)
                for path in instructor_labs(labs).values()}
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path, student in students.items():
        target = out / path.name
        nbformat.write(student, str(target))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("labs", type=Path, help="folder of instructor notebooks")
    parser.add_argument("-o", "--out", type=Path, required=True, help="folder for the student versions")
    parser.add_argument("--site", action="store_true", help="links for the copies in book/labs/")
    parser.add_argument("--chapters", metavar="URL", help="the course site's URL: chapter links point there")
    args = parser.parse_args(argv)
    if not args.labs.is_dir():
        parser.error(f"{args.labs} is not a folder (expected the folder of instructor notebooks)")
    if not any(args.labs.glob("*.ipynb")):
        parser.error(f"{args.labs} holds no notebooks (*.ipynb)")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} is a file, not a folder")
    if args.site and args.chapters:
        parser.error("--site and --chapters are two places for the links: give one")
    if args.out.resolve() == args.labs.resolve():
        parser.error("--out must differ from the instructor folder (the release would overwrite solutions)")
    try:
        written = release(args.labs, args.out, args.site, args.chapters)
    except MarkerError as e:  # the instructor's to fix: the message says where, a traceback adds nothing
        parser.exit(2, f"{parser.prog}: error: {e}\n")
    except LeakError as e:
        parser.exit(1, f"{parser.prog}: error: {e}\n")
    for path in written:
        print(f"released {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
