"""Grading beyond one machine (issue 30): the grader's unit of work is one submission, so a class
can be graded as many jobs (Kubernetes Jobs, a batch scheduler's array job), each grading a shard
of the students into its own OUT, and the parts merged into one gradebook here.

    python -m operator_course.grader.merge shard SUBMISSIONS --index I --count N -o SHARD
        [--roster F --roster-out SHARD_ROSTER]
    python -m operator_course.grader.merge PART... -o OUT [--labs labs/] [--submissions DIR] [--roster F]
        (a PART folder named shard: ./shard)

``shard`` copies the students of shard I of N into SHARD, a submissions folder for grade.py:
every student SUBMISSIONS holds (and every one the roster names), sorted by name, goes to the
shard of its position mod N, so N shards are disjoint and cover the class. Entries are copied as
the grader would see them: notebooks as regular files with their times; what the grader refuses
(a symbolic link, a file with several hard links, a FIFO) stays something it refuses. With
--roster, SHARD_ROSTER (default: SHARD.roster.txt beside SHARD) gets the roster's students of
this shard: give it to grade.py as --roster, so a shard records no "missing" rows for students
of other shards. Each job then runs, with the same --seed everywhere:

    python -m operator_course.grader.grade SHARD -o PART --seed "$SEED" [--roster SHARD_ROSTER] ...

The merge. Each PART is a complete OUT of grade.py (gradebook.csv and manifest.json at least).
OUT's own gradebook, when it has one, is the oldest part: merging parts into OUT is grading them
into OUT, as grade.py merges a run into an earlier gradebook. The parts follow in the order of
their manifests' graded_at (the command line's order between equal times), folded with
gradebook.merge, so:
  - students graded in one part only: their rows, as that part wrote them;
  - a (student, lab) graded in several parts: THE RULE is that the later part (by graded_at)
    counts, as gradebook.merge decides for a regrade: its rows replace the earlier ones, except
    that an earlier real result for the same answers is kept where the later part has none
    (pending) or a lesser one (a CPU verdict after a GPU's). Different answers never inherit;
  - two parts that graded the same (student, lab) with different answers at the same graded_at:
    no rule decides, and the merge refuses, naming the student, the lab and both parts.
Totals are recomputed (gradebook.write). timings.json: each kept row's timing is the one of the
part its row came from (class_data.record_timings then keeps those of the same answers, as after
a grading run). feedback/<student>.md is the part's own file (with its pictures) where one part
gave all the student's rows, else written again from the merged rows (as grade.py does on a
regrade). logs/<student>/<lab>/ come from the latest part that gave verdicts of that lab. A part's
reference/ (the course's reference kernels) is copied from the latest part that has one.
OUT/manifest.json names every part (path, graded_at, seed, device, students) and the overlaps,
and flags parts graded with different seeds ("seeds_differ"): their secret inputs differed, so
give every job one seed. The class view (class_view.build) is rebuilt once, for the whole class:
pass --submissions (all of them) and --labs for the similarity check across shards; pseudonyms
come from OUT's key ($OPRT_PSEUDONYM_KEY or OUT/.pseudonym-key), not the parts'.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from . import gradebook
from .class_data import FEEDBACK_MARK, REFERENCE, TIMINGS, read_timings, record_timings
from .gradebook import Row

SHARD_MARK = ".oprt-shard"  # in a shard folder: what made it (a stray file to the grader)


class MergeError(Exception):
    pass


# --- the shards ---------------------------------------------------------------------------------

def _entry_student(entry: Path) -> str | None:
    """The student the grader files this entry of SUBMISSIONS under (submissions.collect's rule),
    or None for an entry it skips (a README)."""
    from .submissions import STUDENT_NAME, _notebooks_of, _safe_name

    name = entry.name[:-len(".ipynb")] if entry.name.endswith(".ipynb") and not entry.is_dir() else entry.name
    paths, problems = _notebooks_of(entry)
    if not paths and not problems and not entry.is_dir():
        return None
    return name if STUDENT_NAME.match(name) else _safe_name(name)


def students_of(submissions: Path, roster: list[str] | None = None) -> dict[str, list[Path]]:
    """Every student of the class (the grader's name) -> their entries in SUBMISSIONS."""
    found: dict[str, list[Path]] = {s: [] for s in roster or []}
    for entry in sorted(Path(submissions).iterdir()):
        student = _entry_student(entry)
        if student is not None:
            found.setdefault(student, []).append(entry)
    return found


def shard_students(students, index: int, count: int) -> list[str]:
    """The students of shard ``index`` of ``count``: those whose position in the sorted class is
    ``index`` mod ``count``."""
    return [s for i, s in enumerate(sorted(set(students))) if i % count == index]


def make_shard(submissions: Path, index: int, count: int, out: Path, roster: list[str] | None = None,
               roster_out: Path | None = None) -> list[str]:
    """SHARD: copies of the entries of shard ``index``'s students (and their roster); returns them."""
    if count < 1 or not 0 <= index < count:
        raise MergeError(f"--index {index} is not a shard of --count {count} (0 to {count - 1})")
    submissions, out = Path(submissions), Path(out)
    if not submissions.is_dir():
        raise MergeError(f"SUBMISSIONS {submissions} is not a folder")
    s_real, o_real = submissions.resolve(), out.resolve()
    if o_real == s_real or s_real in o_real.parents or o_real in s_real.parents:
        raise MergeError(f"the shard {out} must lie outside SUBMISSIONS {submissions} (and not contain it)")
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise MergeError(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / SHARD_MARK).is_file():
            raise MergeError(f"{out} is not empty and is no shard of this command's: name a new folder")
        shutil.rmtree(out)  # an earlier attempt of this shard (a retried job): made afresh
    out.mkdir(parents=True, exist_ok=True)
    everyone = students_of(submissions, roster)
    mine = shard_students(everyone, index, count)
    for student in mine:
        for entry in everyone[student]:
            _copy_entry(entry, out / entry.name)
    gradebook.atomic_write(out / SHARD_MARK, json.dumps({"index": index, "count": count, "source": str(s_real),
                                                         "students": mine}, indent=1))
    if roster is not None:
        chosen = set(mine)
        target = roster_out or out.parent / f"{out.name}.roster.txt"
        gradebook.atomic_write(Path(target), "".join(f"{s}\n" for s in roster if s in chosen))
    return mine


def _copy_entry(entry: Path, dst: Path) -> None:
    if entry.is_symlink():  # the grader notes it and reads nothing: a link it is again
        _copy_file(entry, dst)
    elif entry.is_dir():  # a student's folder: the notebooks in it, as the grader lists them
        dst.mkdir()
        for child in sorted(entry.iterdir()):
            if child.name.endswith(".ipynb"):
                _copy_file(child, dst / child.name)
    else:
        _copy_file(entry, dst)


def _copy_file(src: Path, dst: Path) -> None:
    """A copy the grader judges as it judges ``src``: a regular file of one name is copied (bytes
    and times, never through a link); what it refuses stays refused: a link stays a link (its
    target is never read), a file with several names is linked again (else, across file
    systems, left as a FIFO), a folder named *.ipynb stays a folder, anything else is a FIFO."""
    info = os.lstat(src)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(src), dst)
    elif stat.S_ISDIR(info.st_mode):
        os.mkdir(dst)
    elif stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
        try:
            fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            print(f"shard: WARNING: {src} cannot be read ({e}); left as a file the grader refuses", file=sys.stderr)
            os.mkfifo(dst)
            return
        with os.fdopen(fd, "rb") as f, open(dst, "xb") as g:
            shutil.copyfileobj(f, g)
    elif stat.S_ISREG(info.st_mode):
        try:
            os.link(src, dst, follow_symlinks=False)
        except OSError:
            print(f"shard: WARNING: {src} has {info.st_nlink} hard links (the grader refuses it) and cannot be "
                  "linked into the shard; left as a FIFO, which the grader refuses too", file=sys.stderr)
            os.mkfifo(dst)
            return
    else:
        os.mkfifo(dst)
    os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)


# --- the merge ----------------------------------------------------------------------------------

@dataclass(eq=False)  # a part is itself: hashed by identity
class Part:
    path: Path
    rows: list[Row]
    manifest: dict
    timings: dict[str, dict]
    order: int  # its place on the command line (-1: OUT's own gradebook)
    graded_at: datetime | None = None
    pairs: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (student, lab) -> answers graded

    @property
    def name(self) -> str:
        return f"{self.path} (OUT before this merge)" if self.order < 0 else str(self.path)

    def seeds(self) -> list:
        seeds = self.manifest.get("seeds")
        return list(seeds) if isinstance(seeds, list) else [self.manifest.get("seed")]


def _graded_at(text) -> datetime:
    return datetime.strptime(str(text), "%Y-%m-%dT%H:%M:%S%z")


def _safe_component(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name


def read_part(path: Path, order: int) -> Part:
    path = Path(path)
    what = "OUT" if order < 0 else "part"
    if not (path / "gradebook.csv").is_file():
        raise MergeError(f"{what} {path} has no gradebook.csv: not a finished grading run (did its job fail?)")
    try:
        rows = gradebook.read_rows(path / "gradebook.csv")
    except ValueError as e:
        raise MergeError(f"{what} {path}: {e}") from None
    try:
        manifest = json.loads((path / "manifest.json").read_text())
    except (OSError, ValueError) as e:
        if order < 0:
            manifest = {}
        else:
            raise MergeError(f"part {path} has no readable manifest.json ({e}): not a finished grading run") from None
    part = Part(path, rows, manifest if isinstance(manifest, dict) else {}, read_timings(path), order)
    if order >= 0:
        try:
            part.graded_at = _graded_at(part.manifest.get("graded_at"))
        except (TypeError, ValueError):
            raise MergeError(f"part {path}: its manifest.json has no graded_at (as grade.py writes it, "
                             f"e.g. 2026-10-06T12:00:00+0000): the merge cannot tell which part is later") from None
    for r in rows:
        if not (_safe_component(r.student) and _safe_component(r.lab)):
            raise MergeError(f"{what} {path}: the gradebook names student {r.student!r}, lab {r.lab!r}: not "
                             "names the grader writes")
        if r.lab != "-" and r.status != "note":
            part.pairs.setdefault((r.student, r.lab), set()).add(r.answers)
    return part


def check_conflicts(parts: list[Part]) -> list[dict]:
    """The (student, lab) pairs graded in several parts (in merge order), each with the part that
    counts; MergeError for two parts that graded one pair with different answers at one time."""
    seen: dict[tuple[str, str], list[Part]] = {}
    for p in parts:
        for pair in p.pairs:
            seen.setdefault(pair, []).append(p)
    overlaps = []
    for (student, lab), who in sorted(seen.items()):
        if len(who) < 2:
            continue
        for a, b in zip(who, who[1:]):
            if a.graded_at == b.graded_at and a.pairs[(student, lab)] != b.pairs[(student, lab)]:
                raise MergeError(
                    f"student {student}, lab {lab}: graded with different answers in {a.path} and {b.path}, both "
                    f"graded_at {a.manifest.get('graded_at')}: no rule decides which counts (the later part "
                    "counts). Grade that student again into one part, or leave one of the parts out")
        overlaps.append({"student": student, "lab": lab, "parts": [str(p.path) for p in who],
                         "counts": str(who[-1].path),
                         "answers_differ": len({frozenset(p.pairs[(student, lab)]) for p in who}) > 1})
    return overlaps


def merge_parts(part_paths: list[Path], out: Path, labs_dir: Path | None = None, submissions: Path | None = None,
                roster: list[str] | None = None, class_view: bool = True) -> dict:
    """Merges the parts into OUT (see the module's text); returns the merged manifest."""
    out = Path(out)
    if not part_paths:
        raise MergeError("no PART to merge")
    if out.exists() and not out.is_dir():
        raise MergeError(f"-o {out} exists and is not a folder")
    seen_paths = {}
    for p in part_paths:
        real = Path(p).resolve()
        if real == out.resolve():
            raise MergeError(f"part {p} is OUT itself: merge the parts into another folder")
        if real in seen_paths:
            raise MergeError(f"part {p} is named twice ({seen_paths[real]})")
        seen_paths[real] = p
    parts = [read_part(p, i) for i, p in enumerate(part_paths)]
    parts.sort(key=lambda p: (p.graded_at, p.order))
    overlaps = check_conflicts(parts)
    base = read_part(out, -1) if (out / "gradebook.csv").is_file() else None
    sources = ([base] if base else []) + parts  # oldest first

    origin: dict[int, Part] = {}  # id(row) -> the part it came from
    merged: list[Row] = []
    for p in sources:
        for r in p.rows:
            origin[id(r)] = p
        merged = gradebook.merge(merged, p.rows)

    labs = _labs(sources, merged, labs_dir)
    by_student: dict[str, list[Row]] = {}
    for r in merged:
        by_student.setdefault(r.student, []).append(r)
    verbatim = {}  # student -> the feedback file of the one part that gave all their rows
    for student, mine in by_student.items():
        src = {origin[id(r)] for r in mine}
        if len(src) == 1:
            (p,) = src
            path = p.path / "feedback" / f"{student}.md"
            if sum(r.student == student for r in p.rows) == len(mine) and path.is_file() and not path.is_symlink():
                verbatim[student] = path.read_text().split("\n" + FEEDBACK_MARK)[0].rstrip("\n")

    gradebook.write(out, merged, labs)
    for student, text in verbatim.items():
        gradebook.atomic_write(out / "feedback" / f"{student}.md", text)
    _merge_timings(out, merged, origin)
    _copy_logs(out, merged, origin, sources)
    _copy_reference(out, parts)
    manifest = _manifest(sources, parts, base, overlaps, labs, merged)
    gradebook.atomic_write(out / "manifest.json", json.dumps(manifest, indent=2))
    if manifest["seeds_differ"]:
        print(f"merge: WARNING: the parts were graded with different seeds {manifest['seeds']}: their secret inputs "
              "differ. Grade every job with one --seed.", file=sys.stderr)
    if class_view:
        from .class_view import build

        try:
            written = build(out, submissions, labs_dir, roster)
            print(f"class view: {written['leaderboard']}, {written['dashboard']}", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - as after a grading run: the grades are written
            import traceback

            traceback.print_exc()
            print(f"merge: WARNING: the class view was not rebuilt ({type(e).__name__}: {e}); the grades are "
                  f"written. Rebuild it with python -m operator_course.grader.class_view {out}", file=sys.stderr)
    return manifest


def _labs(sources: list[Part], merged: list[Row], labs_dir: Path | None) -> list[str]:
    """The totals' lab columns: the instructor notebooks' labs (--labs), else every lab a part's
    manifest names; then any other lab of the rows."""
    if labs_dir is not None:
        from .grade import load_labs

        labs = list(load_labs(Path(labs_dir)))
    else:
        labs = []
        for p in sources:
            labs += [lab for lab in p.manifest.get("labs", {}) if lab not in labs]
    return labs + sorted({r.lab for r in merged if r.lab != "-"} - set(labs))


def _merge_timings(out: Path, merged: list[Row], origin: dict[int, Part]) -> None:
    """Each kept row's timing from the part its row came from; class_data.record_timings keeps those
    of the same answers and gives them the row's status, as it does for an earlier run's timings."""
    from .class_data import _key

    entries = {}
    for r in merged:
        entry = origin[id(r)].timings.get(_key(r.student, r.lab, r.check))
        if entry is not None:
            entries[_key(r.student, r.lab, r.check)] = entry
    gradebook.atomic_write(out / TIMINGS, json.dumps({"version": 1, "entries": dict(sorted(entries.items()))}))
    record_timings(out, merged, [], "")


def _copy_logs(out: Path, merged: list[Row], origin: dict[int, Part], sources: list[Part]) -> None:
    """logs/<student>/<lab>/ of the latest part that gave verdicts of that (student, lab) (notes
    only where it has none): the run whose results count."""
    rank = {id(p): i for i, p in enumerate(sources)}
    latest: dict[tuple[str, str], tuple[bool, int, Part]] = {}
    for r in merged:
        if r.lab == "-":
            continue
        p = origin[id(r)]
        pair, mine = (r.student, r.lab), (r.status != "note", rank[id(p)], p)
        if pair not in latest or mine[:2] > latest[pair][:2]:
            latest[pair] = mine
    latest = {pair: p for pair, (_, _, p) in latest.items()}
    for (student, lab), p in sorted(latest.items(), key=lambda kv: kv[0]):
        if p.order < 0:
            continue  # OUT's own: already there
        dst = out / "logs" / student / lab
        if dst.is_symlink() or dst.is_file():
            dst.unlink()
        elif dst.is_dir():
            shutil.rmtree(dst)
        src = p.path / "logs" / student / lab
        if src.is_dir() and not src.is_symlink():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(src, dst, symlinks=True)


def _copy_reference(out: Path, parts: list[Part]) -> None:
    with_reference = [p for p in parts if (p.path / REFERENCE / TIMINGS).is_file()]
    if with_reference:
        dst = out / REFERENCE
        if dst.is_dir() and not dst.is_symlink():
            shutil.rmtree(dst)
        shutil.copytree(with_reference[-1].path / REFERENCE, dst, symlinks=True)


def _manifest(sources: list[Part], parts: list[Part], base: Part | None, overlaps: list[dict], labs: list[str],
              merged: list[Row]) -> dict:
    seeds = []
    for p in sources:
        seeds += [s for s in p.seeds() if s not in seeds]
    known = sorted((s for s in seeds if s is not None), key=str)
    warnings = []
    if len(seeds) > 1:
        warnings.append(f"parts graded with different seeds ({', '.join(map(str, seeds))}): their secret inputs "
                        "differ; grade every job with one --seed")
    lab_info: dict[str, dict] = {}
    labs_differ = []
    for p in sources:
        for lab, info in p.manifest.get("labs", {}).items():
            if lab in lab_info and isinstance(info, dict) and info.get("sha256") != lab_info[lab].get("sha256"):
                if lab not in labs_differ:
                    labs_differ.append(lab)
            lab_info[lab] = info if isinstance(info, dict) else {}
    if labs_differ:
        warnings.append(f"parts graded different versions of the instructor notebooks of {', '.join(labs_differ)}")
    if any(p.manifest.get("sandbox") is False for p in sources):
        warnings.append("a part was graded without the sandbox (--unsafe-no-sandbox)")
    devices = sorted({str(p.manifest.get("device")) for p in sources if p.manifest.get("device")})
    times = [p.graded_at for p in parts]
    newest = max(times)
    describe = [{"path": str(p.path), "graded_at": p.manifest.get("graded_at"), "seed": p.manifest.get("seed"),
                 "device": p.manifest.get("device"), "sandbox": p.manifest.get("sandbox"),
                 "limits": p.manifest.get("limits"), "gpus": p.manifest.get("gpus"), "seconds": p.manifest.get("seconds"),
                 "students": len({r.student for r in p.rows})} for p in parts]
    if base is not None:
        describe.insert(0, {"path": str(base.path), "earlier": True, "graded_at": base.manifest.get("graded_at"),
                            "seeds": base.seeds(), "students": len({r.student for r in base.rows})})
    verdicts = sorted({str(p.manifest.get("cpu_verdicts")) for p in sources if p.manifest.get("cpu_verdicts")})
    return {
        "graded_at": newest.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "merged_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "device": ", ".join(devices) or "?",
        "sandbox": all(p.manifest.get("sandbox", True) is not False for p in sources),
        "seed": known[0] if len(seeds) == 1 and known else None,
        "seeds": seeds,
        "seeds_differ": len(seeds) > 1,
        "cpu_verdicts": verdicts[0] if len(verdicts) == 1 else verdicts,
        "gpus": sorted({str(g) for p in sources for g in (p.manifest.get("gpus") or [])}),
        "students": len({r.student for r in merged}),
        "rule": "parts in order of graded_at (OUT's earlier gradebook first); for a (student, lab) graded in "
                "several, the later part counts as gradebook.merge decides a regrade",
        "parts": describe,
        "overlaps": overlaps,
        "labs_differ": labs_differ,
        "warnings": warnings,
        "labs": {lab: lab_info.get(lab, {}) for lab in labs},
    }


# --- the commands -------------------------------------------------------------------------------

def shard_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m operator_course.grader.merge shard",
                                     description="Copy one shard of a class's submissions into a folder for grade.py.")
    parser.add_argument("submissions", type=Path, help="the class's submissions (one folder or notebook per student)")
    parser.add_argument("--index", type=int, required=True, help="this shard, 0 to COUNT-1 (a Job's "
                        "$JOB_COMPLETION_INDEX)")
    parser.add_argument("--count", type=int, required=True, help="how many shards")
    parser.add_argument("-o", "--out", type=Path, required=True, help="the shard's submissions folder (made)")
    parser.add_argument("--roster", type=Path, help="the class roster: its students count for the sharding, and "
                        "this shard's are written to --roster-out")
    parser.add_argument("--roster-out", type=Path, help="this shard's roster (default: OUT.roster.txt beside OUT)")
    args = parser.parse_args(argv)
    from .submissions import read_roster

    try:
        roster = read_roster(args.roster) if args.roster else None
        mine = make_shard(args.submissions, args.index, args.count, args.out, roster, args.roster_out)
    except (MergeError, OSError, ValueError) as e:
        print(f"shard: error: {e}", file=sys.stderr)
        return 2
    print(f"shard {args.index} of {args.count}: {len(mine)} students in {args.out}")
    return 0


def merge_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m operator_course.grader.merge", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", type=Path, nargs="+", metavar="PART", help="grade.py OUT folders, one per job")
    parser.add_argument("-o", "--out", type=Path, required=True, help="the merged gradebook folder")
    parser.add_argument("--labs", type=Path, help="the instructor notebooks: the totals' labs, the similarity check")
    parser.add_argument("--submissions", type=Path, help="the whole class's submissions (the similarity check)")
    parser.add_argument("--roster", type=Path, help="one student per line: who is missing (the dashboard)")
    parser.add_argument("--no-class-view", action="store_true", help="skip the leaderboard and dashboard")
    args = parser.parse_args(argv)
    from .submissions import read_roster

    try:
        roster = read_roster(args.roster) if args.roster else None
        manifest = merge_parts(args.parts, args.out, args.labs, args.submissions, roster, not args.no_class_view)
    except (MergeError, OSError, ValueError) as e:
        print(f"merge: error: {e}", file=sys.stderr)
        return 2
    print(f"merged {len(args.parts)} parts ({manifest['students']} students, seeds {manifest['seeds']}, "
          f"{len(manifest['overlaps'])} overlapping student/lab pairs): {args.out / 'gradebook.csv'}, totals.csv, "
          "feedback/, logs/, manifest.json")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "shard":
        return shard_main(argv[1:])
    return merge_main(argv)


if __name__ == "__main__":
    sys.exit(main())
