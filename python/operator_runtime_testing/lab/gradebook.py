"""Grading stage 5, record: the gradebook and what students and the LMS get from it.

OUT/gradebook.csv   student, lab, check, status, points, max, reason: one row per check
                    (status passed | failed | pending | note). Regrading merges: rows of the
                    (student, lab) pairs graded now replace the old ones, except that a check
                    pending here (needs a GPU) keeps an earlier pass's real result.
OUT/totals.csv      one row per student: points per lab, total, max, pending (for an LMS)
OUT/feedback/<student>.md   every reason in full
Files are written whole to a temp name and renamed, so a reader never sees half a gradebook."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from dataclasses import asdict, dataclass, fields
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

    @property
    def key(self) -> tuple[str, str, str]:
        return self.student, self.lab, self.check


COLUMNS = [f.name for f in fields(Row)]


def read_rows(path: Path) -> list[Row]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != COLUMNS:
            raise ValueError(f"{path} is not a gradebook of this grader (columns {reader.fieldnames})")
        return [Row(r["student"], r["lab"], r["check"], r["status"], float(r["points"]), float(r["max"]), r["reason"])
                for r in reader]


def merge(old: list[Row], new: list[Row]) -> list[Row]:
    regraded = {(r.student, r.lab) for r in new}
    earlier = {r.key: r for r in old if r.status != PENDING and r.status != "note"}
    kept = [r for r in old if (r.student, r.lab) not in regraded]
    merged = [earlier.get(r.key, r) if r.status == PENDING else r for r in new]
    return sorted(kept + merged, key=lambda r: (r.student, r.lab))


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


def write(out: Path, rows: list[Row], labs: list[str]) -> None:
    atomic_write(out / "gradebook.csv", _csv(COLUMNS, [list(asdict(r).values()) for r in rows]))
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
    lines.append(f"Long output (compiler reports, the runs' logs) is kept by the grader in logs/{mine[0].student}/.")
    return "\n".join(lines)


def _num(x: float) -> str:
    return f"{x:g}"
