"""The class view's data (class_view.py is the step, leaderboard.py and dashboard.py the pages):
the trusted harness's timings as numbers (``timing_from_result``, which score.verdict calls) and
OUT/timings.json merged across runs (``record_timings``), the students' pseudonyms, everything
else the pages show read from OUT (``load``: gradebook, timings, the reference kernel's timings,
similarity pairs, late rows, flags), the pages' HTML frame, and each feedback file's pseudonym line."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from .gradebook import Row, atomic_write, read_rows

TIMINGS = "timings.json"
SIMILARITY = "similarity.json"
KEY_FILE = ".pseudonym-key"
REFERENCE = "reference"  # OUT/reference/: the instructor's solutions, graded (class_view --reference)
FEEDBACK_MARK = "<!-- class-view: leaderboard -->"
PUBLIC_URL = "/services/site/leaderboard/"  # where the hub serves OUT/leaderboard (hub_config.py)

# --- the harness's result, as data --------------------------------------------------------------

_NUMBER = r"[0-9][0-9.]*(?:e[+-]?[0-9]+)?"
_SHAPE = r"[0-9]+(?:x[0-9]+)*"
_PART = re.compile(rf"(?P<shape>{_SHAPE}): (?P<ours>{_NUMBER}) (?P<unit>GB/s|TFLOP/s) vs torch "
                   rf"(?P<torch>{_NUMBER}) \((?P<ratio>{_NUMBER})x\)")
_CEILING = re.compile(rf"; ceiling (?P<ceiling>{_NUMBER}) (?P<unit>GB/s|TFLOP/s)\)$")
_IMPOSSIBLE = re.compile(rf"timed at (?P<rate>{_NUMBER}) (?P<unit>GB/s|TFLOP/s) for shape (?P<shape>{_SHAPE}), "
                         rf"above what this GPU can do \((?P<ceiling>{_NUMBER}) ")


def _shape(text: str) -> list[int]:
    return [int(d) for d in text.split("x")]


def timing_from_result(result: dict | None, op: str) -> dict | None:
    """A performance job's result (runner.py) as a timing record: {"op", "unit", "ceiling", "ratio",
    "shapes": [{"shape", "rate", "torch_rate", "ratio"}], "flag"}; a flagged failure keeps its flag
    (and, for an impossible timing, the rate and ceiling the harness named); None for a result that
    is no timing (a compile error, a crash)."""
    if not isinstance(result, dict):
        return None
    flag = result.get("flag") if isinstance(result.get("flag"), str) else None
    if result.get("error"):
        if not flag:
            return None
        record = {"op": op, "flag": flag, "shapes": [], "error": str(result["error"])[:500]}
        found = _IMPOSSIBLE.search(str(result["error"]))
        if found:
            record.update(unit=found["unit"], ceiling=float(found["ceiling"]),
                          impossible={"shape": _shape(found["shape"]), "rate": float(found["rate"])})
        return record
    ratio = result.get("ratio")
    if not isinstance(ratio, (int, float)) or not math.isfinite(ratio):
        return None
    if isinstance(result.get("shapes"), list):  # structured already (a runner that sends the Measurement)
        shapes = [{"shape": list(s["shape"]), "rate": float(s["rate"]), "torch_rate": float(s["torch_rate"]),
                   "ratio": float(s.get("ratio", s["rate"] / s["torch_rate"]))} for s in result["shapes"]]
        return {"op": op, "unit": result.get("unit"), "ceiling": float(result["ceiling"]), "ratio": float(ratio),
                "shapes": shapes, "flag": flag}
    summary = str(result.get("summary", ""))
    ceiling = _CEILING.search(summary)
    parts = list(_PART.finditer(summary))
    if not ceiling or not parts:
        return None
    shapes = [{"shape": _shape(p["shape"]), "rate": float(p["ours"]), "torch_rate": float(p["torch"]),
               "ratio": float(p["ratio"])} for p in parts]
    return {"op": op, "unit": ceiling["unit"], "ceiling": float(ceiling["ceiling"]), "ratio": float(ratio),
            "shapes": shapes, "flag": flag}


# --- OUT/timings.json ---------------------------------------------------------------------------

def _key(student: str, lab: str, check: str) -> str:
    return f"{student}/{lab}/{check}"


def read_timings(out: Path) -> dict[str, dict]:
    path = Path(out) / TIMINGS
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        return {k: v for k, v in data.get("entries", {}).items() if isinstance(v, dict)}
    except (OSError, ValueError, AttributeError):
        return {}


def record_timings(out: Path, merged: list[Row], new: list[Row], graded_at: str = "") -> dict[str, dict]:
    """OUT/timings.json, merged across runs as the gradebook is: a check's timing is the one of the
    row the gradebook keeps (this run's, where this run's row is kept; else the earlier one, where it
    judged the same answers). Rows of this run carry their timing as ``row.timing`` (score.verdict)."""
    old = read_timings(out)
    fresh = {id(r) for r in new}
    entries = {}
    for r in merged:
        k = _key(r.student, r.lab, r.check)
        if id(r) in fresh:
            timing = getattr(r, "timing", None)
            if timing:
                entries[k] = {**timing, "student": r.student, "lab": r.lab, "check": r.check, "answers": r.answers,
                              "graded_on": r.graded_on, "status": r.status, "graded_at": graded_at}
        elif k in old and old[k].get("answers", "") == r.answers:
            entries[k] = {**old[k], "status": r.status}
    atomic_write(Path(out) / TIMINGS, json.dumps({"version": 1, "entries": dict(sorted(entries.items()))}, indent=1))
    return entries


# --- pseudonyms ---------------------------------------------------------------------------------

ADJECTIVES = (
    "agile amber ancient bold brave breezy bright brisk calm candid clever cosmic crisp curious daring "
    "dashing eager earnest electric fearless fierce gentle gleaming golden grand happy hardy humble jolly "
    "keen kind lively lucky lunar mellow merry mighty nimble noble patient plucky polar proud quick quiet "
    "radiant rapid royal serene sharp shiny silent silver sleek smart solar spry steady stellar sunny swift "
    "tidy vivid wise witty zesty").split()
ANIMALS = (
    "albatross alpaca antelope badger beaver bison bobcat caribou cheetah condor cougar coyote crane dingo "
    "dolphin eagle falcon ferret finch fox gazelle gecko heron ibex jaguar kestrel koala lemur leopard lynx "
    "magpie marmot marten meerkat mongoose moose narwhal ocelot orca osprey otter owl panda panther pelican "
    "penguin puffin quokka raven robin salmon seal sparrow stork swan tapir tiger toucan walrus weasel wolf "
    "wombat yak zebra").split()


def course_key(out: Path) -> bytes:
    """The course's secret for pseudonyms: $OPRT_PSEUDONYM_KEY, else OUT/.pseudonym-key (made once,
    mode 0600: the grades folder is the instructor's)."""
    if os.environ.get("OPRT_PSEUDONYM_KEY"):
        return os.environ["OPRT_PSEUDONYM_KEY"].encode()
    path = Path(out) / KEY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    return path.read_text().strip().encode()


def pseudonym(student: str, key: bytes) -> str:
    """adjective-animal-NN, the same for a student under one key (an HMAC of the name)."""
    digest = int.from_bytes(hmac.new(key, student.encode(), hashlib.sha256).digest()[:8], "big")
    return f"{ADJECTIVES[digest % len(ADJECTIVES)]}-{ANIMALS[digest // 97 % len(ANIMALS)]}-{digest // 9973 % 100:02d}"


def pseudonyms(students, key: bytes) -> dict[str, str]:
    """Each student's pseudonym; where two of a class collide (1 in ~500,000 per pair), both get
    more of their HMAC, so neither name is anyone else's."""
    names = {s: pseudonym(s, key) for s in sorted(set(students))}
    seen: dict[str, list[str]] = {}
    for s, p in names.items():
        seen.setdefault(p, []).append(s)
    for p, who in seen.items():
        if len(who) > 1:
            for s in who:
                names[s] = f"{p}-{hmac.new(key, s.encode(), hashlib.sha256).hexdigest()[:4]}"
    return names


# --- what the class view reads ------------------------------------------------------------------

@dataclass
class Flag:
    student: str
    lab: str
    what: str  # impossible timing | faster than the ceiling | wrong result while timed | FLAGGED | note | similar
    detail: str


@dataclass
class ClassData:
    out: Path
    rows: list[Row]
    timings: dict[str, dict]
    reference: dict[str, dict]  # lab -> the reference kernel's timing entry
    manifest: dict
    roster: list[str] | None
    names: dict[str, str]  # student -> pseudonym
    pairs: list[dict]  # similarity.to_json's pairs (flagged only)
    similarity_note: str
    late: list[Row]
    late_applied: bool
    flags: list[Flag] = field(default_factory=list)

    @property
    def labs(self) -> list[str]:
        labs = list(self.manifest.get("labs", {}))
        return labs + sorted({r.lab for r in self.rows if r.lab != "-"} - set(labs))

    @property
    def students(self) -> list[str]:
        return sorted({r.student for r in self.rows} | set(self.roster or []))

    def flagged(self, student: str, lab: str) -> list[Flag]:
        return [f for f in self.flags if f.student == student and f.lab == lab]


def _similar_pairs(out: Path, submissions: Path | None, labs: Path | None) -> tuple[list[dict], str]:
    """(flagged pairs as similarity.to_json gives them, a note): computed over SUBMISSIONS and written
    to OUT/similarity.json when both folders are given, else read back from it."""
    path = out / SIMILARITY
    if submissions is not None and labs is not None:
        try:
            from . import similarity
        except ImportError:
            return [], "similarity.py is not installed here: no similarity check"
        try:
            pairs = similarity.flag_pairs(Path(submissions), Path(labs))
            atomic_write(path, similarity.to_json(pairs))
        except Exception as e:  # noqa: BLE001 - the class view goes on without it
            return [], f"the similarity check failed ({type(e).__name__}: {e})"
    if not path.is_file():
        return [], "no similarity check was run (no OUT/similarity.json)"
    try:
        data = json.loads(path.read_text())
    except ValueError as e:
        return [], f"OUT/similarity.json cannot be read ({e})"
    pairs = [p for p in data.get("pairs", []) if p.get("flagged", True)]
    return pairs, f"similarity: pairs of one lab sharing {data.get('threshold', '?')} or more of the smaller side's " \
                  f"fingerprints ({data.get('min_shared', '?')} or more shared), from OUT/similarity.json"


def _timing_flags(entry: dict) -> list[tuple[str, str]]:
    flags = []
    if entry.get("flag"):
        detail = entry.get("error", "")
        if entry.get("impossible"):
            imp = entry["impossible"]
            detail = (f"{imp['rate']:g} {entry.get('unit', '')} on shape {'x'.join(map(str, imp['shape']))}, above "
                      f"the ceiling of {entry.get('ceiling', 0):g} measured in the same run")
        flags.append((entry["flag"], detail))
    ceiling = entry.get("ceiling") or 0
    over = [s for s in entry.get("shapes", []) if ceiling and s["rate"] > ceiling]
    if over:
        flags.append(("faster than the ceiling", "; ".join(
            f"{s['rate']:g} {entry.get('unit', '')} on shape {'x'.join(map(str, s['shape']))} "
            f"({100 * s['rate'] / ceiling:.0f}%)" for s in over) + f", above the ceiling of {ceiling:g} measured "
            "in the same run"))
    return flags


def load(out: Path, submissions: Path | None = None, labs: Path | None = None, roster: list[str] | None = None,
         course=None) -> ClassData:
    out = Path(out)
    rows = read_rows(out / "gradebook.csv")
    try:
        manifest = json.loads((out / "manifest.json").read_text())
    except (OSError, ValueError):
        manifest = {}
    timings = read_timings(out)
    reference = {e["lab"]: e for e in read_timings(out / REFERENCE).values() if e.get("shapes")}
    late = [r for r in rows if r.check == "late"]
    late_applied = bool(late)
    if not late and course is not None:  # due dates known, the late rule not applied (yet): say what it would do
        try:
            from operator_course.hosting.late import late_rows

            late = late_rows(course, rows)
        except Exception:  # noqa: BLE001 - no collected.json, no due dates: nothing to show
            late = []
    if roster is None and course is not None and Path(course.roster).is_file():
        from .submissions import read_roster

        roster = read_roster(Path(course.roster))
    students = {r.student for r in rows if r.student} | set(roster or [])
    pairs, note = _similar_pairs(out, submissions, labs)
    data = ClassData(out, rows, timings, reference, manifest, roster, pseudonyms(students, course_key(out)),
                     pairs, note, late, late_applied)
    told = set()  # (student, lab, check) whose timing says its flag already: its row and note say it again
    for entry in timings.values():
        for what, detail in _timing_flags(entry):
            data.flags.append(Flag(entry["student"], entry["lab"], what, f"{entry['check']}: {detail}"))
            told.add((entry["student"], entry["lab"], entry["check"]))
    for r in rows:
        if r.reason.startswith("FLAGGED") and r.key not in told:
            data.flags.append(Flag(r.student, r.lab, "FLAGGED", f"{r.check}: {r.reason.splitlines()[0][:300]}"))
        elif r.check == "flags" and r.status == "note" and (r.student, r.lab, r.reason.split(":")[0]) not in told:
            data.flags.append(Flag(r.student, r.lab, "flag note", r.reason[:300]))
    for p in pairs:
        for me, other in ((p["student_a"], p["student_b"]), (p["student_b"], p["student_a"])):
            data.flags.append(Flag(me, p["lab"], "similar", f"to {other}: evidence {p.get('evidence', p['score']):.2f}"))
    return data


# --- HTML ---------------------------------------------------------------------------------------

def esc(value) -> str:
    """Text for HTML: everything a student wrote (reasons quote compiler output of their code, spans
    of similarity quote their cells) is escaped, attributes included."""
    import html

    return html.escape(str(value), quote=True)


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 75em; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.baseline td { background: #f7f7ff; font-style: italic; }
tr.flagged td { background: #fff0f0; } .flag { color: #b00; font-weight: bold; }
pre { background: #f8f8f8; padding: 0.5em; overflow-x: auto; max-width: 42em; margin: 0; font-size: 0.85em; }
img { max-width: 100%; } .note { color: #555; font-size: 0.9em; } nav a { margin-right: 1em; }
"""


def page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>\n<h1>{esc(title)}</h1>\n{body}\n"
            f"</body></html>\n")


# --- the feedback's line ------------------------------------------------------------------------

def tell_pseudonyms(out: Path, names: dict[str, str]) -> int:
    """Each feedback file ends with the student's own pseudonym (replacing this section of an earlier
    build; gradebook.write rewrites the files whole on every run)."""
    done = 0
    for student, name in names.items():
        path = Path(out) / "feedback" / f"{student}.md"
        if not path.is_file() or path.is_symlink():
            continue
        text = path.read_text()
        text = text.split("\n" + FEEDBACK_MARK)[0].rstrip("\n")
        text += (f"\n\n{FEEDBACK_MARK}\n## The class leaderboard\n\nOn the class leaderboard (on the course hub: "
                 f"{PUBLIC_URL}, your row: {PUBLIC_URL}#p-{name}) you appear as **{name}**. Only you and the "
                 f"instructor know that name is yours: the board shows every student under such a name.\n")
        atomic_write(path, text)
        done += 1
    return done
