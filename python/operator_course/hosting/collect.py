"""``course collect``: each student's lab notebooks from ~/<home_labs>/ into
submissions/<student>/, with submissions/<student>/collected.json saying when each was last
saved (its mtime, also kept on the copy). Each run is a fresh snapshot.

Read as root from homes students control, so only what is theirs is taken: the folder and each
notebook must be owned by the student and not links (a link to a classmate's notebook, or a hard
link to any file, is skipped, with the reason in collected.json), each read with
operator_course.grader.submissions.read_regular, which checks the opened file itself."""

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


def collect_student(course: Course, name: str) -> dict:
    user = pwd.getpwnam(name)
    out = course.submissions / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    folder = Path(user.pw_dir) / course.home_labs
    record: dict = {"student": name, "folder": str(folder), "notebooks": {}, "skipped": {}}
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
            mtime = os.lstat(path).st_mtime
            (out / path.name).write_bytes(data)
            os.utime(out / path.name, (mtime, mtime))
            record["notebooks"][path.name] = {
                "lab": _lab_id(data, path), "bytes": len(data),
                "saved": datetime.fromtimestamp(mtime, timezone.utc).isoformat(timespec="seconds")}
    (out / "collected.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def _lab_id(data: bytes, path: Path) -> str:
    try:
        lab = json.loads(data).get("metadata", {}).get("lab", {})
        if isinstance(lab, dict) and isinstance(lab.get("id"), str):
            return lab["id"]
    except (ValueError, AttributeError):
        pass
    return path.stem


def collect(course: Course) -> dict[str, dict]:
    course.submissions.mkdir(parents=True, exist_ok=True)
    os.chmod(course.submissions, 0o700)
    return {name: collect_student(course, name) for name in accounts.students(course.roster)}
