"""``course collect``: each student's lab notebooks into submissions/<student>/, with
submissions/<student>/collected.json saying where each came from and when. Of each lab, the
latest submission (the student's ``submit``: ~/.course/submitted/<lab>/, read by submit.py, its
time in "submitted"), else the notebook saved in ~/<home_labs>/ (as "saved": its mtime). The copy
keeps that time as its mtime. Each run is a fresh snapshot.

Read as root from homes students control, so only what is theirs is taken: the folder and each
notebook must be owned by the student and not links (a link to a classmate's notebook, or a hard
link to any file, is skipped, with the reason in collected.json), each read with
operator_course.grader.submissions.read_regular, which checks the opened file itself (the
submissions: submit.py, relative to folders opened without following links)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
from datetime import datetime, timezone
from pathlib import Path

from operator_course.grader.submissions import read_regular
from . import accounts
from .submit import claim_differs, latest_submissions
from .config import Course


def _owned(path: Path, uid: int, want) -> str | None:
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    if not want(info.st_mode):
        return "not a regular file or folder"
    if info.st_uid != uid:
        return "not owned by the student"
    return None


def collect_student(course: Course, name: str, user=None) -> dict:
    """``user``: the student's passwd entry (pw_dir, pw_uid; default the system's)."""
    user = user or pwd.getpwnam(name)
    out = course.submissions / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    folder = Path(user.pw_dir) / course.home_labs
    record: dict = {"student": name, "folder": str(folder), "notebooks": {}, "skipped": {}}
    saved: dict[str, tuple[bytes, float]] = {}
    if not folder.exists() and not folder.is_symlink():
        record["skipped"][str(folder)] = "no such folder"
    elif (why := _owned(folder, user.pw_uid, stat.S_ISDIR)):
        record["skipped"][str(folder)] = why
    else:
        for path in sorted(folder.glob("*.ipynb")):
            why = _owned(path, user.pw_uid, stat.S_ISREG)
            if why is None:
                try:
                    data = read_regular(path, owner=user.pw_uid)
                except (OSError, ValueError) as e:
                    why = str(e)
            if why:
                record["skipped"][path.name] = why
                continue
            saved[path.name] = (data, os.lstat(path).st_mtime)
    submitted, skipped = latest_submissions(user.pw_dir, user.pw_uid)
    record["skipped"].update(skipped)
    taken = {}  # lab id (the notebook's, as the grader reads it) -> its latest submission
    for snapshot in sorted(submitted.values(), key=lambda s: s.submitted):
        taken[_lab_id(snapshot.data, Path(snapshot.name))] = snapshot
    for filename, (data, mtime) in saved.items():
        lab = _lab_id(data, Path(filename))
        if lab in taken:
            record["skipped"][filename] = f"the saved notebook; your submission of {lab} counts"
            continue
        _write(out / filename, data, mtime)
        record["notebooks"][filename] = {"lab": lab, "bytes": len(data), "from": "saved", "saved": _iso(mtime)}
    for lab, snapshot in sorted(taken.items()):
        filename = snapshot.name
        if filename in record["notebooks"]:  # a saved notebook of another lab has that name: both are kept
            filename = f"{snapshot.lab}.submitted.ipynb"  # the outbox folder's name: a plain one
        _write(out / filename, snapshot.data, snapshot.submitted.timestamp())
        entry = {"lab": lab, "bytes": len(snapshot.data), "from": "submitted",
                 "submitted": snapshot.submitted.isoformat(timespec="seconds"),
                 "saved": snapshot.saved or snapshot.submitted.isoformat(timespec="seconds"),
                 "sha256": snapshot.sha256, "snapshot": snapshot.where}
        if claim_differs(snapshot):
            entry["claimed"] = snapshot.claimed
        record["notebooks"][filename] = entry
    (out / "collected.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def _write(path: Path, data: bytes, mtime: float) -> None:
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))


def _lab_id(data: bytes, path: Path) -> str:
    try:
        lab = json.loads(data).get("metadata", {}).get("lab", {})
        if isinstance(lab, dict) and isinstance(lab.get("id"), str):
            return lab["id"]
    except (ValueError, AttributeError):
        pass
    return path.stem


def collect(course: Course, lookup=pwd.getpwnam) -> dict[str, dict]:
    """``lookup``: name -> the student's passwd entry (tests point it at folders of their own)."""
    course.submissions.mkdir(parents=True, exist_ok=True)
    os.chmod(course.submissions, 0o700)
    return {name: collect_student(course, name, lookup(name)) for name in accounts.students(course.roster)}
