"""Grading stage 1, collect: what each student submitted, read once, as data, with every
oddity turned into a reason instead of an exception.

SUBMISSIONS holds one folder per student (lab notebooks inside) or one notebook per student
(``alice.ipynb``). Only regular files count (no links, FIFOs or devices), each at most
MAX_NOTEBOOK bytes; a notebook's lab is its metadata's lab id, else its file name. Per student
and lab exactly one ``Submission``: the notebook, or why there is none."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

MAX_NOTEBOOK = 8 << 20
STUDENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


@dataclass
class Submission:
    student: str
    lab: str
    notebook: object | None  # parsed, or None with ``problem`` saying why
    problem: str | None = None
    notes: list[str] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)


def read_regular(path: Path, limit: int = MAX_NOTEBOOK, owner: int | None = None, hard_links: bool = False) -> bytes:
    """The file's bytes; refuses links, FIFOs, devices and files over ``limit`` without blocking,
    and (unless ``hard_links``) a file with more than one name: a hard link to the instructor's
    notebook or a root-only file is not a submission. ``owner``: the uid the file must belong to.
    Every check is of the opened file (fstat), so a rename in between changes nothing."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_nlink != 1 and not hard_links:
            raise ValueError(f"a file with {info.st_nlink} hard links (a submission must be a file of its own)")
        if owner is not None and info.st_uid != owner:
            raise ValueError("not owned by the student")
        if info.st_size > limit:
            raise ValueError(f"{info.st_size} bytes; the limit is {limit}")
        data = os.read(fd, limit + 1)
        while len(data) <= limit:
            more = os.read(fd, limit + 1 - len(data))
            if not more:
                break
            data += more
        if len(data) > limit:
            raise ValueError(f"more than {limit} bytes")
        return data
    finally:
        os.close(fd)


def _parse(data: bytes):
    nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    if not isinstance(nb.get("cells"), list):
        raise ValueError("no list of cells")
    return nb


def _meta_lab(nb) -> str | None:
    lab = nb.get("metadata", {}).get("lab")
    return lab["id"] if isinstance(lab, dict) and isinstance(lab.get("id"), str) else None


def answers_of(nb, wanted: list[str]) -> tuple[dict[str, str], list[str]]:
    """(answer id -> source, notes) from the student's cells; metadata of any shape is read
    defensively. A repeated answer cell: the last counts (it is the one that ran last)."""
    found: dict[str, list[str]] = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("lab") if isinstance(cell.get("metadata"), dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("answer"), str) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if isinstance(source, str):
            found.setdefault(meta["answer"], []).append(source)
    notes = []
    for answer in wanted:
        if answer not in found:
            notes.append(f"answer cell {answer} is missing from the notebook; graded as empty")
        elif len(found[answer]) > 1:
            notes.append(f"answer cell {answer} appears {len(found[answer])} times; graded the last one")
    return {a: s[-1] for a, s in found.items() if a in wanted}, notes


def _notebooks_of(entry: Path) -> tuple[list[Path], list[str]]:
    if entry.is_symlink():
        return [], [f"{entry.name} is a symbolic link; submissions must be regular files and folders"]
    if entry.is_dir():
        paths = sorted(p for p in entry.iterdir() if p.name.endswith(".ipynb"))
        return paths, []
    if entry.name.endswith(".ipynb"):
        return [entry], []
    return [], []


def collect(folder: Path, labs: dict[str, object], answers: dict[str, list[str]],
            roster: list[str] | None = None) -> tuple[list[Submission], dict[str, list[str]]]:
    """(one Submission per student and lab, notes per student not tied to a lab)."""
    by_student: dict[str, list[Path]] = {}
    notes: dict[str, list[str]] = {}
    for entry in sorted(folder.iterdir()):
        name = entry.name[:-len(".ipynb")] if entry.name.endswith(".ipynb") and not entry.is_dir() else entry.name
        paths, problems = _notebooks_of(entry)
        if not paths and not problems and not entry.is_dir():
            continue  # a stray file (README, .DS_Store): not a submission
        if not STUDENT_NAME.match(name):
            notes.setdefault(_safe_name(name), []).append(f"{entry.name!r} is not a usable student name; skipped")
            continue
        if name in by_student:
            notes.setdefault(name, []).append(f"{entry.name} collides with another submission named {name}; "
                                              f"graded the folder and notebooks first found")
            continue
        by_student[name] = paths
        notes.setdefault(name, []).extend(problems)
    for student in roster or []:
        by_student.setdefault(student, [])
    for student in by_student:
        if roster is not None and student not in roster:
            notes.setdefault(student, []).append("not on the roster")

    subs = []
    for student, paths in sorted(by_student.items()):
        per_lab: dict[str, list[tuple[Path, object]]] = {}
        for path in paths:
            try:
                nb = _parse(read_regular(path))
            except Exception as e:  # noqa: BLE001 - anything wrong with the file is the student's
                lab = _lab_by_name(path.name, labs)
                if lab is None:
                    notes.setdefault(student, []).append(f"{path.name}: unreadable ({_short(e)}) and not a lab name")
                    continue
                per_lab.setdefault(lab, []).append((path, e))
                continue
            lab = _meta_lab(nb) if _meta_lab(nb) in labs else _lab_by_name(path.name, labs)
            if lab is None:
                notes.setdefault(student, []).append(f"{path.name} is not one of the labs ({', '.join(labs)})")
                continue
            per_lab.setdefault(lab, []).append((path, nb))
        for lab in labs:
            subs.append(_one(student, lab, per_lab.get(lab, []), answers[lab]))
    return subs, notes


def _one(student: str, lab: str, found: list[tuple[Path, object]], wanted: list[str]) -> Submission:
    if not found:
        return Submission(student, lab, None, "no notebook submitted for this lab")
    notes = []
    if len(found) > 1:
        # the notebook named as handed out wins; otherwise the latest saved
        found.sort(key=lambda f: (f[0].name == f"{lab}.ipynb", _mtime(f[0])))
        notes.append(f"{len(found)} notebooks for this lab ({', '.join(p.name for p, _ in found)}); "
                     f"graded {found[-1][0].name}")
    path, nb = found[-1]
    if isinstance(nb, Exception):
        return Submission(student, lab, None, f"malformed notebook {path.name}: {_short(nb)}", notes)
    answers, answer_notes = answers_of(nb, wanted)
    return Submission(student, lab, nb, None, notes + answer_notes, answers)


def _lab_by_name(filename: str, labs) -> str | None:
    stem = filename[:-len(".ipynb")] if filename.endswith(".ipynb") else filename
    return next((lab for lab in labs if stem == lab or stem.startswith(lab)), None)


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def _short(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e)[:200]}"


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._@-]", "_", name)[:64] or "_"


def read_roster(path: Path) -> list[str]:
    """One student per line (a CSV's first column; a header 'student' is skipped)."""
    names = []
    for line in read_regular(path, 1 << 20, hard_links=True).decode("utf-8").splitlines():
        name = line.split(",")[0].strip()
        if name and name.lower() != "student" and not name.startswith("#"):
            if not STUDENT_NAME.match(name):
                raise ValueError(f"roster line {line!r}: not a usable student name")
            names.append(name)
    return names

