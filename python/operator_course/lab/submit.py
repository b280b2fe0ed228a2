"""Hand in a lab: ``submit`` takes a snapshot of the lab's saved notebook, with the time, so
that what is graded is what you chose to hand in, and when.

    python -m operator_course.lab.submit 01_copy          # in a terminal (several labs: 01_copy 02_vector_add)
    python -m operator_course.lab.submit --list           # what you submitted, and when
    lab.submit("01_copy")                                 # in a notebook cell; lab.submit() submits that notebook's lab

A snapshot is ~/.course/submitted/<lab>/<UTC time>.ipynb, the saved notebook's bytes, and
<UTC time>.json beside it (lab, notebook, sha256, bytes, when saved, when submitted), in your
home and yours only. The instructor's ``collect`` takes the latest submission of each lab (the
late rule counts from when it was made) and, of a lab never submitted, the saved notebook in
~/labs/ as before. Submitting again replaces what counts; submitting an unchanged notebook
keeps the earlier submission (and its time).

It refuses, saying why, before writing anything: a lab that is not one of the course's, a lab
with no notebook in ~/labs/, a notebook whose answer cells are still as handed out, and a
notebook last saved more than ``RECENT`` ago (it snapshots the saved file, not edits made since:
save, then submit; or pass --force / force=True to hand in the file as saved then).

$OPRT_LABS names the labs folder (default ~/labs) and $OPRT_HANDOUT the released notebooks
(the hub sets both); without a handout the course's labs are the notebooks in the labs folder."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import types
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

OUTBOX = Path(".course") / "submitted"  # under the student's home
MAX_NOTEBOOK = 8 << 20  # what collect reads (operator_course.grader.submissions.MAX_NOTEBOOK)
RECENT = timedelta(minutes=30)  # a notebook saved longer ago than this needs force=True
STAMP = "%Y%m%dT%H%M%S.%fZ"  # a snapshot's name: its UTC time, sortable, no colons


class SubmitError(Exception):
    """Why nothing was submitted: in a notebook the message alone is shown, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: " + str(self).replace("\n", "\n    ")]


@dataclass
class Submitted:
    lab: str
    notebook: Path  # the snapshot
    manifest: dict
    unchanged: bool = False  # the notebook was already submitted as it is: that submission stands

    def __repr__(self) -> str:
        return f"Submitted({self.lab!r}, at {self.manifest['submitted']}{', unchanged' if self.unchanged else ''})"


def home_dir(home: Path | None = None) -> Path:
    return Path(home) if home is not None else Path.home()


def labs_folder(home: Path | None = None) -> Path:
    given = os.environ.get("OPRT_LABS")
    return Path(given) if given and home is None else home_dir(home) / "labs"


def handout_folder() -> Path | None:
    given = os.environ.get("OPRT_HANDOUT")
    return Path(given) if given and Path(given).is_dir() else None


def lab_id(nb: dict, path: Path) -> str:
    lab = nb.get("metadata", {}).get("lab") if isinstance(nb.get("metadata"), dict) else None
    return lab["id"] if isinstance(lab, dict) and isinstance(lab.get("id"), str) else path.stem


def read_notebook(path: Path) -> tuple[bytes, dict]:
    """The saved file's bytes and JSON; SubmitError if it is not a notebook collect would take."""
    size = os.stat(path).st_size
    if size > MAX_NOTEBOOK:
        raise SubmitError(f"{path} is {size >> 20} MiB, more than the {MAX_NOTEBOOK >> 20} MiB a submission may "
                          "be: clear large outputs (Edit > Clear Outputs of All Cells), save, and submit again")
    data = path.read_bytes()
    try:
        nb = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise SubmitError(f"{path} is not a notebook (not JSON: {e})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise SubmitError(f"{path} is not a notebook (no list of cells)")
    return data, nb


def notebooks(folder: Path) -> dict[str, Path]:
    """lab id -> its notebook in ``folder``; of two of one lab, the one named as handed out."""
    found: dict[str, Path] = {}
    for path in sorted(folder.glob("*.ipynb")) if folder.is_dir() else []:
        try:
            lab = lab_id(json.loads(path.read_bytes()), path)
        except (OSError, ValueError, UnicodeDecodeError, AttributeError):
            lab = path.stem  # not a notebook: read_notebook says so when it is submitted
        if lab not in found or path.stem == lab:
            found[lab] = path
    return found


def answers(nb: dict) -> dict[str, str]:
    """answer id -> source of the notebook's answer cells (the last of a repeated one)."""
    found = {}
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("lab") if isinstance(cell, dict) and isinstance(
            cell.get("metadata"), dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("answer"), str) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            found[meta["answer"]] = "".join(source) if isinstance(source, list) else str(source)
    return found


def session_notebook() -> Path | None:
    """The notebook this kernel belongs to, when JupyterLab started it for one ($JPY_SESSION_NAME)."""
    name = os.environ.get("JPY_SESSION_NAME")
    return Path(name) if name and name.endswith(".ipynb") else None


def validating() -> bool:
    """True inside ``validate``'s run of a notebook: a submit or validate cell there does nothing."""
    return bool(os.environ.get("OPRT_VALIDATING"))


def resolve(lab: str, folder: Path, handout: Path | None) -> tuple[str, Path]:
    """(lab id, its notebook) for a lab named by id or file name; SubmitError for one the course lacks."""
    mine = notebooks(folder)
    if lab.endswith(".ipynb"):  # a notebook's file name: its lab
        lab = {p.name: id_ for id_, p in mine.items()}.get(Path(lab).name, Path(lab).stem)
    known = sorted(notebooks(handout)) if handout else sorted(mine)
    if lab not in known:
        listed = ", ".join(known) if known else f"none: {folder} holds no lab notebook"
        raise SubmitError(f"unknown lab {lab!r}: the labs are {listed}")
    if lab not in mine:
        raise SubmitError(f"nothing to submit for {lab}: no notebook of it in {folder} (expected {folder / lab}.ipynb)")
    return lab, mine[lab]


def _ago(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h" if seconds < 172800 else f"{seconds // 86400} days"


def latest(outbox: Path, lab: str) -> tuple[Path, dict] | None:
    """(snapshot, manifest) of ``lab``'s latest submission in ``outbox``, or None."""
    best = None
    for path in sorted((outbox / lab).glob("*.json")) if (outbox / lab).is_dir() else []:
        try:
            manifest = json.loads(path.read_text())
            key = (str(manifest["submitted"]), path.name)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if best is None or key > best[0]:
            best = (key, path.with_suffix(".ipynb"), manifest)
    return best[1:] if best else None


def _write(path: Path, data: bytes) -> None:
    """``data`` into ``path`` whole or not at all (a temporary file renamed over it), mode 0600."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".incoming-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _outbox(home: Path) -> Path:
    box = home / OUTBOX
    box.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(home / OUTBOX.parts[0], 0o700)
    return box


def submit(*labs: str, home: Path | None = None, folder: Path | None = None, handout: Path | None = None,
           force: bool = False, now: datetime | None = None, say=print) -> list[Submitted]:
    """Snapshots each lab's saved notebook (see the module's docstring); every lab is checked
    before anything is written. No lab named: the notebook this kernel runs (in JupyterLab)."""
    if validating():
        say("submit: skipped (validate is running this notebook)")
        return []
    folder = Path(folder) if folder is not None else labs_folder(home)
    handout = Path(handout) if handout is not None else handout_folder()
    if not labs:
        own = session_notebook()
        mine = notebooks(folder)
        if own is None or own.resolve() not in {p.resolve() for p in mine.values()}:
            raise SubmitError(f"which lab? name it, e.g. lab.submit(\"01_copy\") or `python -m "
                              f"operator_course.lab.submit 01_copy`; the labs in {folder}: {', '.join(mine) or 'none'}")
        labs = (next(lab for lab, p in mine.items() if p.resolve() == own.resolve()),)
    now = now or datetime.now(timezone.utc)
    planned = []
    for name in dict.fromkeys(labs):
        lab, path = resolve(name, folder, handout)
        data, nb = read_notebook(path)
        saved = datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc)
        if now - saved > RECENT and not force:
            raise SubmitError(
                f"{path} was last saved {_ago(now - saved)} ago ({saved:%Y-%m-%d %H:%M} UTC). submit takes the saved "
                "file, not edits made since: save it (File > Save Notebook, Ctrl+S) and submit again; to hand in the "
                "file as saved then, pass --force (in a cell: lab.submit(..., force=True))")
        given = notebooks(handout).get(lab) if handout else None
        if given is not None:
            try:
                unchanged = answers(nb) == answers(json.loads(given.read_bytes()))
            except (OSError, ValueError, UnicodeDecodeError):
                unchanged = False
            if unchanged:
                raise SubmitError(f"nothing to submit for {lab}: the answer cells of {path} are as handed out "
                                  "(write your answers, save, then submit)")
        planned.append((lab, path, data, saved))
    done = []
    for lab, path, data, saved in planned:
        digest = hashlib.sha256(data).hexdigest()
        box = _outbox(home_dir(home))
        before = latest(box, lab)
        if before is not None and before[1].get("sha256") == digest and before[0].is_file():
            say(f"{lab}: unchanged since your submission of {before[1]['submitted']}: that one stands")
            done.append(Submitted(lab, before[0], before[1], unchanged=True))
            continue
        (box / lab).mkdir(mode=0o700, exist_ok=True)
        stamp = now.strftime(STAMP)
        while (box / lab / f"{stamp}.json").exists():  # two submissions in one microsecond
            now += timedelta(microseconds=1)
            stamp = now.strftime(STAMP)
        manifest = {"lab": lab, "notebook": path.name, "source": str(path), "sha256": digest, "bytes": len(data),
                    "saved": saved.isoformat(timespec="seconds"), "submitted": now.isoformat(timespec="microseconds"),
                    "stamp": stamp}
        snapshot = box / lab / f"{stamp}.ipynb"
        _write(snapshot, data)
        _write(box / lab / f"{stamp}.json", (json.dumps(manifest, indent=2) + "\n").encode())  # last: it completes
        say(f"submitted {lab}: {path} as saved at {saved:%Y-%m-%d %H:%M:%S} UTC ({_ago(now - saved)} ago; edits not "
            f"saved are not in it), at {now:%Y-%m-%d %H:%M:%S} UTC, sha256 {digest[:12]}: {snapshot}")
        done.append(Submitted(lab, snapshot, manifest))
    if done:
        say("Your latest submission of each lab is the one graded; submit again to replace it (its time then counts "
            "for the due date).")
    return done


def history(home: Path | None = None) -> dict[str, list[dict]]:
    """lab -> the manifests of its submissions, oldest first."""
    box = home_dir(home) / OUTBOX
    found = {}
    for folder in sorted(box.iterdir()) if box.is_dir() else []:
        entries = []
        for path in sorted(folder.glob("*.json")):
            try:
                entries.append(json.loads(path.read_text()))
            except (OSError, ValueError):
                continue
        if entries:
            found[folder.name] = sorted(entries, key=lambda m: str(m.get("submitted")))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m operator_course.lab.submit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("labs", nargs="*", metavar="LAB", help="lab id (01_copy) or notebook name (01_copy.ipynb)")
    parser.add_argument("--force", action="store_true", help="submit a notebook saved long ago as it was saved")
    parser.add_argument("--list", action="store_true", help="list your submissions")
    args = parser.parse_args(argv)
    if args.list:
        for lab, entries in history().items():
            for m in entries:
                mark = "  (counts)" if m is entries[-1] else ""
                print(f"{lab}  submitted {m.get('submitted')}  sha256 {str(m.get('sha256'))[:12]}{mark}")
        return 0
    if not args.labs:
        mine = ", ".join(notebooks(labs_folder())) or "none"
        parser.error(f"name the lab(s) to submit; yours: {mine}")
    try:
        submit(*args.labs, force=args.force)
    except SubmitError as e:
        print(f"submit: {e}", file=sys.stderr)
        return 2
    return 0


class _Command(types.ModuleType):
    """``lab.submit`` is this module, callable: lab.submit("01_copy") is submit("01_copy") (a
    package's submodule of a function's name replaces the function once imported)."""

    def __call__(self, *labs: str, **options) -> list[Submitted]:
        return submit(*labs, **options)


if __name__ == "__main__":
    sys.exit(main())
else:
    sys.modules[__name__].__class__ = _Command
