"""Grading stage 5, record: the gradebook and what students and the LMS get from it.

OUT/gradebook.csv   student, lab, check, status, points, max, reason, answers, graded_on: one row
                    per check (status passed | failed | pending | note; answers: the hash of
                    the answer cells judged; graded_on: cpu | cuda, where the verdict came from).
                    Regrading merges: rows of the (student, lab) pairs graded now replace the old
                    ones, except that an earlier real result for the same answers is kept where
                    this pass has none (pending: needs a GPU) or has a lesser one (a CPU verdict
                    after a GPU's). Different answers never inherit a result.
OUT/totals.csv      one row per student: points per lab, total, max, pending (for an LMS)
OUT/feedback/<student>.md   every reason in full, with the picture of a wrong result's elements
                    (embedded as a PNG: the file is whole wherever it is copied, e.g. `course return`)
Files are written whole to a temp name and renamed, so a reader never sees half a gradebook.
Text cells that a spreadsheet would read as a formula (a student's error text starting with `=`)
are written with a leading `'`."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path

PENDING = "pending"


@dataclass
class Row:
    student: str
    lab: str
    check: str
    status: str  # passed | failed | pending | note
    points: float
    max: float
    reason: str
    answers: str = ""  # grade.answers_hash of the answer cells this row judged
    graded_on: str = ""  # cpu | cuda: the machine whose run gave this verdict
    # a wrong result's picture (lab/picture.png, base64): for the feedback file, not a gradebook column
    picture: str = field(default="", repr=False)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.student, self.lab, self.check


COLUMNS = [f.name for f in fields(Row) if f.name != "picture"]


MAX_REASON = 20_000  # characters of a reason in the gradebook (the feedback and logs keep the rest)


def read_rows(path: Path) -> list[Row]:
    if not path.exists():
        return []
    csv.field_size_limit(max(csv.field_size_limit(), 4 * MAX_REASON))
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames not in (COLUMNS, COLUMNS[:7]):  # [:7]: a gradebook from before answers/graded_on
                raise ValueError(f"{path} is not a gradebook of this grader (columns {reader.fieldnames})")
            return [Row(*(plain(r[c]) for c in ("student", "lab", "check", "status")), float(r["points"]),
                        float(r["max"]), plain(r["reason"]), r.get("answers", ""), r.get("graded_on", ""))
                    for r in reader]
    except (csv.Error, KeyError, TypeError) as e:
        raise ValueError(f"{path} cannot be read as a gradebook ({e}): move it aside to grade afresh") from None


def merge(old: list[Row], new: list[Row]) -> list[Row]:
    regraded = {(r.student, r.lab) for r in new}
    earlier = {r.key: r for r in old if r.status not in (PENDING, "note") and r.answers}
    kept = [r for r in old if (r.student, r.lab) not in regraded]
    merged = [_better(earlier.get(r.key), r) for r in new]
    return sorted(kept + merged, key=lambda r: (r.student, r.lab))


def _better(old: Row | None, new: Row) -> Row:
    """An earlier real result for the same answers outranks a pending one, and a GPU's verdict a
    CPU's; anything else (other answers, a GPU pass after a CPU one) takes the new row."""
    if old is None or old.answers != new.answers or new.status == "note":
        return new
    if new.status == PENDING or (old.graded_on == "cuda" and new.graded_on == "cpu"):
        return old
    return new


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _csv(header: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutral(value):
    """A text cell no spreadsheet runs: a leading ' before what would start a formula (OWASP's
    CSV-injection advice); numbers stay numbers."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def plain(value: str) -> str:
    """A cell as it was before ``neutral`` (the student-notes lab "-" was written "'-")"""
    return value[1:] if value.startswith("'") and value[1:].startswith(FORMULA_STARTS) else value


def write(out: Path, rows: list[Row], labs: list[str]) -> None:
    for r in rows:  # one student's text must not make the next run's read_rows fail (or a 2 MB cell)
        if len(r.reason) > MAX_REASON:
            r.reason = r.reason[:MAX_REASON] + "\n[... cut]"
    atomic_write(out / "gradebook.csv", _csv(COLUMNS, [[neutral(getattr(r, c)) for c in COLUMNS] for r in rows]))
    students = sorted({r.student for r in rows})
    table = []
    for student in students:
        mine = [r for r in rows if r.student == student]
        per_lab = [sum(r.points for r in mine if r.lab == lab) for lab in labs]
        table.append([student, *map(_num, per_lab), _num(sum(per_lab)), _num(sum(r.max for r in mine)),
                      _num(sum(r.max for r in mine if r.status == PENDING))])
    atomic_write(out / "totals.csv", _csv(["student", *labs, "total", "max", "pending"], table))
    for student in students:
        atomic_write(out / "feedback" / f"{student}.md", feedback([r for r in rows if r.student == student]))


def feedback(mine: list[Row]) -> str:
    total, best = sum(r.points for r in mine), sum(r.max for r in mine)
    pending = sum(r.max for r in mine if r.status == PENDING)
    lines = [f"# Feedback for {mine[0].student}", "", f"Total: {total:g} / {best:g}"
             + (f" ({pending:g} points pending: graded on a GPU machine)" if pending else ""), ""]
    for lab in sorted({r.lab for r in mine}):
        lines += [f"## {lab}", "", "| check | points | status |", "|---|---:|---|"]
        lines += [f"| {r.check} | {r.points:g} / {r.max:g} | {r.status} |" for r in mine if r.lab == lab]
        lines.append("")
        for r in mine:
            if r.lab == lab and r.status != "passed":
                lines += [f"### {r.check}: {r.status}", "", "```text", r.reason.replace("```", "'''"), "```", ""]
                if r.picture:
                    lines += [f"![{r.check}: where the wrong elements are (red)](data:image/png;base64,{r.picture})", ""]
    lines.append(f"Long output (compiler reports, the runs' logs) is kept by the grader in logs/{mine[0].student}/.")
    return "\n".join(lines)


def _num(x: float) -> str:
    return f"{x:g}"
