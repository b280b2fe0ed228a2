"""The late rule, applied to a graded gradebook: a lab handed in after its due date (course.toml
[labs.<id>] due; the time from collected.json: when the collected submission was submitted, or,
for a lab never submitted, when its notebook was saved) gets a row ``late``: with rule "flag" a note
(status note, 0 points), with rule "deduct" status late and minus per_day of the points the lab
earned for each started day, at most ``max`` of them. Idempotent: earlier late rows go first,
so regrading and applying it again gives the same gradebook."""

from __future__ import annotations

import csv
import json
import math
from datetime import datetime

from operator_course.grader import gradebook
from operator_course.grader.gradebook import Row
from .config import Course


def handed_in(course: Course) -> dict[tuple[str, str], tuple[datetime, str]]:
    """(student, lab) -> (when, "submitted" or "saved") of its collected notebook: a submission's
    time (collect.py: the file system's, not the student's word), else the notebook's save time."""
    times: dict[tuple[str, str], tuple[datetime, str]] = {}
    for record in course.submissions.glob("*/collected.json"):
        data = json.loads(record.read_text())
        for entry in data.get("notebooks", {}).values():
            how = "submitted" if entry.get("submitted") else "saved"
            when = datetime.fromisoformat(entry[how])
            key = (data["student"], entry["lab"])
            if key not in times or when > times[key][0]:
                times[key] = (when, how)
    return times


def late_rows(course: Course, rows: list[Row]) -> list[Row]:
    out, graded = [], {(r.student, r.lab) for r in rows}
    for (student, lab), (when, how) in sorted(handed_in(course).items()):
        due = course.due.get(lab)
        if due is None or when <= due or (student, lab) not in graded:
            continue
        days = math.ceil((when - due).total_seconds() / 86400)
        reason = f"{how} {when.isoformat()}, {days} day(s) after the due date {due.isoformat()}"
        if course.late_rule == "flag":
            out.append(Row(student, lab, "late", "note", 0.0, 0.0, reason))
            continue
        earned = sum(r.points for r in rows if r.student == student and r.lab == lab)
        fraction = min(days * course.late_per_day, course.late_max)
        out.append(Row(student, lab, "late", "late", -round(earned * fraction, 2), 0.0,
                       f"{reason}: minus {fraction:.0%} of the {earned:g} points earned"))
    return out


def apply(course: Course) -> list[Row]:
    rows = [r for r in gradebook.read_rows(course.grades / "gradebook.csv") if r.check != "late"]
    with open(course.grades / "totals.csv", newline="") as f:
        labs = next(csv.reader(f))[1:-3]  # student, <labs...>, total, max, pending
    added = late_rows(course, rows)
    merged = sorted(rows + added, key=lambda r: (r.student, r.lab))
    gradebook.write(course.grades, merged, labs)
    return added
