"""The collect side of ``submit`` (operator_course.lab.submit, which a student runs as
themselves): each student's latest submission of each lab, read as root from their
~/.course/submitted/<lab>/ (<UTC time>.ipynb and its <UTC time>.json manifest).

That folder is the student's, and so is every word a manifest says. So a snapshot counts only
when every folder on the way (.course, submitted, <lab>) and the file itself are theirs and no
links (each opened relative to the one before it, without following links, so nothing can be
swapped in between), the file is regular with one name and within the size limit, and its bytes
have the sha256 its manifest gives. A damaged latest snapshot is skipped (with the reason) for
the one before it. Its time is not the manifest's claim but when the file system last changed
the snapshot or its manifest (their ctime, which no user can set back): a submission may look
later than it was made (a student who touches it), never earlier. The manifest's own claim is
kept beside it when the two differ."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from operator_course.lab.submit import MAX_NOTEBOOK, OUTBOX

MANIFEST = re.compile(r"^(\d{8}T\d{6}\.\d{6}Z)\.json$")  # lab.submit's STAMP names
LAB = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_MANIFEST = 64 << 10
MAX_SUBMISSIONS = 1000  # of one lab, the newest by name (their UTC time) read: a flooded outbox costs this much
CLAIM_SLACK = 120  # seconds a manifest's claimed time may lie before the file's ctime unremarked


@dataclass
class Snapshot:
    lab: str  # the outbox folder's name
    name: str  # the notebook's file name, from the manifest (a plain *.ipynb name)
    data: bytes
    sha256: str
    submitted: datetime  # when the file system last changed the snapshot or its manifest (UTC)
    claimed: str | None  # the manifest's "submitted" (the student's tool's word)
    saved: str | None  # the manifest's "saved": when the student's notebook was saved
    where: str  # the snapshot's path under the home


def _open_dir(name: str, dir_fd: int | None, uid: int | None) -> tuple[int | None, str | None]:
    """(fd, None), (None, why), or (None, None) when ``name`` does not exist."""
    try:
        info = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None, None
    if stat.S_ISLNK(info.st_mode):
        return None, "a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return None, "not a folder"
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as e:
        return None, "a symbolic link" if e.errno in (errno.ELOOP, errno.ENOTDIR) else str(e)
    if uid is not None and os.fstat(fd).st_uid != uid:
        os.close(fd)
        return None, "not owned by the student"
    return fd, None


def read_at(dir_fd: int, name: str, uid: int, limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes of ``name`` in the folder ``dir_fd`` and its stat, checked on the opened file
    (as grader.submissions.read_regular): regular, one name, the student's, within ``limit``."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_nlink != 1:
            raise ValueError(f"a file with {info.st_nlink} hard links")
        if info.st_uid != uid:
            raise ValueError("not owned by the student")
        if info.st_size > limit:
            raise ValueError(f"{info.st_size} bytes; the limit is {limit}")
        data = b""
        while len(data) <= limit:
            more = os.read(fd, limit + 1 - len(data))
            if not more:
                break
            data += more
        if len(data) > limit:
            raise ValueError(f"more than {limit} bytes")
        return data, os.fstat(fd)
    finally:
        os.close(fd)


def _plain_name(name, lab: str) -> str:
    ok = isinstance(name, str) and name.endswith(".ipynb") and "/" not in name and "\0" not in name \
        and not name.startswith(".") and len(name) <= 255
    return name if ok else f"{lab}.ipynb"


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(int(seconds), timezone.utc)  # whole seconds: what collected.json keeps


def _latest_of(lab: str, folder: int, uid: int, where: str, skipped: dict) -> Snapshot | None:
    claims = []
    names = sorted((n for n in os.listdir(folder) if MANIFEST.match(n)), reverse=True)
    if len(names) > MAX_SUBMISSIONS:
        skipped[where] = f"{len(names) - MAX_SUBMISSIONS} submissions older than the newest {MAX_SUBMISSIONS} not read"
    for name in names[:MAX_SUBMISSIONS]:
        try:
            data, _ = read_at(folder, name, uid, MAX_MANIFEST)
            manifest = json.loads(data)
            claims.append((str(manifest["submitted"]), name, manifest))
        except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
            skipped[f"{where}/{name}"] = f"manifest unreadable: {e}"
    for claimed, name, manifest in sorted(claims, key=lambda c: c[:2], reverse=True):
        snapshot = name.removesuffix(".json") + ".ipynb"
        try:
            data, info = read_at(folder, snapshot, uid, MAX_NOTEBOOK)
            meta = os.lstat(name, dir_fd=folder)
        except (OSError, ValueError) as e:
            skipped[f"{where}/{snapshot}"] = str(e)
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != manifest.get("sha256"):
            skipped[f"{where}/{snapshot}"] = "its bytes do not match the sha256 of its manifest (changed after submit)"
            continue
        saved = manifest.get("saved")
        return Snapshot(lab, _plain_name(manifest.get("notebook"), lab), data, digest,
                        _utc(max(info.st_ctime, meta.st_ctime)), claimed, saved if isinstance(saved, str) else None,
                        f"{where}/{snapshot}")
    return None


def latest_submissions(home: str | Path, uid: int) -> tuple[dict[str, Snapshot], dict[str, str]]:
    """(outbox lab folder -> its latest intact submission, path under the home -> why skipped)."""
    found: dict[str, Snapshot] = {}
    skipped: dict[str, str] = {}
    try:
        fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return found, skipped
    opened = [fd]
    try:
        where = ""
        for part in OUTBOX.parts:  # .course, submitted
            where = f"{where}/{part}".lstrip("/")
            fd, why = _open_dir(part, fd, uid)
            if fd is None:
                if why:
                    skipped[where] = why
                return found, skipped
            opened.append(fd)
        for lab in sorted(os.listdir(fd)):
            if not LAB.match(lab):
                continue
            folder, why = _open_dir(lab, fd, uid)
            if folder is None:
                if why:
                    skipped[f"{where}/{lab}"] = why
                continue
            try:
                snapshot = _latest_of(lab, folder, uid, f"{where}/{lab}", skipped)
            finally:
                os.close(folder)
            if snapshot is not None:
                found[lab] = snapshot
    finally:
        for fd in opened:
            os.close(fd)
    return found, skipped


def claim_differs(snapshot: Snapshot) -> bool:
    """The manifest claims a time well before the file system's: worth a word to the instructor."""
    try:
        claimed = datetime.fromisoformat(snapshot.claimed or "")
    except ValueError:
        return True
    if claimed.tzinfo is None:
        return True
    return (snapshot.submitted - claimed).total_seconds() > CLAIM_SLACK
