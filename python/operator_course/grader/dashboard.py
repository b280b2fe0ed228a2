"""The instructor's dashboard (class_view.py builds it): OUT/dashboard/index.html with its charts
beside it. For the instructor only: it names students, quotes their errors and their code. The hub
serves it to the course's admins alone (hosting/dashboard_server.py); or open the file where the
grades are.

Sections: per lab and check, pass rates and the distribution of points; the most common causes of
failure, grouped by the judge's diagnosis (the first "Hint:" of a reason, else its first line with
numbers and quoted names made general); late work (the gradebook's late rows, or what the late rule
would add where it has not run); missing notebooks (roster students without one); checks pending a
GPU pass; flagged submissions and timings; pairs the similarity check flagged, their matching spans
side by side; the leaderboard with real names and flags; and every student's feedback and logs
(relative links into OUT/feedback/ and OUT/logs/)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import quote

from . import leaderboard
from .class_data import ClassData, atomic_write, esc, page
from .gradebook import PENDING, Row

MISSING = "no notebook submitted for this lab"
_HINT = re.compile(r"Hint: (.+?)(?:\.\s|\.$|$)", re.S)
_NEEDS = re.compile(r"this check needs ([0-9.]+)x torch")


def _general(text: str) -> str:
    text = re.sub(r'"[^"\n]{0,80}"', '"..."', text)  # names a compiler quotes from the student's code
    text = re.sub(r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b", "N", text)
    return text if len(text) <= 180 else text[:177] + "..."


def diagnosis(reason: str) -> str:
    """The judge's diagnosis of a failure, as a group: its first hint, else the kind of message."""
    text = reason.lstrip("'").strip()
    if not text:
        return "(no reason given)"
    needs = _NEEDS.search(text)
    if needs:
        return f"slower than the check needs ({needs.group(1)}x torch)"
    if text.startswith("FLAGGED"):
        return _general(text.split(":", 1)[0])
    hint = _HINT.search(text)
    if hint:
        return "Hint: " + _general(" ".join(hint.group(1).split()))
    return _general(text.splitlines()[0])


def _checks(data: ClassData) -> dict[str, list[str]]:
    """lab -> its checks, in gradebook order."""
    out: dict[str, list[str]] = {}
    for r in data.rows:
        if r.status in ("passed", "failed", PENDING) and r.check not in out.setdefault(r.lab, []):
            out[r.lab].append(r.check)
    return out


def _link(path: str, text: str) -> str:
    return f'<a href="{esc(quote(path))}">{esc(text)}</a>'


def _logs(data: ClassData, student: str, lab: str) -> str:
    """Links to the executed notebook and logs the grader kept for one submission."""
    folder = data.out / "logs" / student / lab
    if not folder.is_dir():
        return ""
    files = sorted((p for p in folder.iterdir() if p.is_file() and not p.is_symlink()),
                   key=lambda p: (p.name != "executed.ipynb", p.name))
    return " ".join(_link(f"../logs/{student}/{lab}/{p.name}", p.name) for p in files)


# --- charts -------------------------------------------------------------------------------------

def _lab_chart(path: Path, lab: str, checks: list[str], counts: dict[str, Counter], totals: list[float],
               best: float) -> None:
    import matplotlib.pyplot as plt

    fig, (bars, hist) = plt.subplots(1, 2, figsize=(9.5, 0.6 + 0.45 * max(4, len(checks))), dpi=100,
                                     layout="constrained", width_ratios=[3, 2])
    left = [0] * len(checks)
    for status, colour in (("passed", "tab:green"), ("failed", "tab:red"), (PENDING, "tab:orange"),
                           ("missing", "tab:gray")):
        values = [counts[c][status] for c in checks]
        bars.barh(checks, values, left=left, color=colour, label=status)
        left = [a + b for a, b in zip(left, values)]
    bars.invert_yaxis()
    bars.xaxis.get_major_locator().set_params(integer=True)
    bars.set_xlabel("students")
    bars.set_title(f"{lab}: each check's results", fontsize=10)
    bars.legend(fontsize=8, loc="lower right")
    hist.hist(totals, bins=min(12, max(3, int(best) + 1)), range=(0, max(best, 1)), color="tab:blue")
    hist.set_xlabel(f"points in {lab} (of {best:g})")
    hist.set_ylabel("students")
    hist.yaxis.get_major_locator().set_params(integer=True)
    hist.set_title("distribution of points", fontsize=10)
    fig.savefig(path)
    plt.close(fig)


def _causes_chart(path: Path, causes: list[tuple[str, int]]) -> None:
    import matplotlib.pyplot as plt

    top = causes[:12]
    fig, ax = plt.subplots(figsize=(9.5, 0.8 + 0.4 * len(top)), dpi=100, layout="constrained")
    ax.barh([c if len(c) <= 70 else c[:67] + "..." for c, _ in top], [n for _, n in top], color="tab:red")
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=8)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("failed checks")
    ax.set_title("most common causes of failure (the judge's diagnosis)", fontsize=10)
    fig.savefig(path)
    plt.close(fig)


# --- sections -----------------------------------------------------------------------------------

def _results(data: ClassData, folder: Path) -> str:
    parts = ['<h2 id="results">Results per lab and check</h2>']
    checks = _checks(data)
    for lab in [lab for lab in data.labs if lab in checks]:
        rows = [r for r in data.rows if r.lab == lab and r.check in checks[lab]]
        counts: dict[str, Counter] = {c: Counter() for c in checks[lab]}
        points: dict[str, list[float]] = defaultdict(list)
        best = {c: 0.0 for c in checks[lab]}
        for r in rows:
            counts[r.check]["missing" if r.reason == MISSING else r.status] += 1
            points[r.check].append(r.points)
            best[r.check] = max(best[r.check], r.max)
        totals = defaultdict(float)
        for r in data.rows:
            if r.lab == lab and r.status != "note":
                totals[r.student] += r.points
        table = ["<table class=\"results\" data-lab=\"" + esc(lab) + "\"><tr><th>check</th><th>points</th>"
                 "<th>passed</th><th>failed</th><th>pending</th><th>missing</th><th>pass rate (of notebooks)</th>"
                 "<th>mean points</th></tr>"]
        for c in checks[lab]:
            n = counts[c]
            handed = n["passed"] + n["failed"] + n[PENDING]
            rate = f"{100 * n['passed'] / handed:.0f}%" if handed else "n/a"
            mean = sum(points[c]) / len(points[c]) if points[c] else 0.0
            table.append(f"<tr><td>{esc(c)}</td><td class=\"num\">{best[c]:g}</td><td class=\"num\">{n['passed']}</td>"
                         f"<td class=\"num\">{n['failed']}</td><td class=\"num\">{n[PENDING]}</td>"
                         f"<td class=\"num\">{n['missing']}</td><td class=\"num\">{rate}</td>"
                         f"<td class=\"num\">{mean:.2f}</td></tr>")
        table.append("</table>")
        png = folder / f"{lab}-results.png"
        _lab_chart(png, lab, checks[lab], counts, list(totals.values()), sum(best.values()))
        parts += [f"<h3>{esc(lab)}</h3>", "\n".join(table),
                  f'<p><img src="{esc(png.name)}" alt="{esc(lab)}: results per check and points"></p>']
    return "\n".join(parts)


def _causes(data: ClassData, folder: Path) -> str:
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in data.rows:
        if r.status == "failed" and r.reason != MISSING:
            groups[diagnosis(r.reason)].append(r)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    parts = ['<h2 id="causes">Most common causes of failure</h2>']
    if not ranked:
        return parts[0] + "<p>No failed check (missing notebooks are listed below).</p>"
    png = folder / "causes.png"
    _causes_chart(png, [(cause, len(rs)) for cause, rs in ranked])
    parts.append(f'<p><img src="{esc(png.name)}" alt="most common causes of failure"></p>')
    parts.append("<table class=\"causes\"><tr><th>diagnosis</th><th>failed checks</th><th>checks</th>"
                 "<th>students</th><th>one of them, in full</th></tr>")
    for cause, rs in ranked:
        who = ", ".join(f'<a href="#student-{esc(s)}">{esc(s)}</a>' for s in sorted({r.student for r in rs}))
        checks = ", ".join(esc(c) for c in sorted({r.check for r in rs}))
        example = rs[0].reason if len(rs[0].reason) <= 600 else rs[0].reason[:600] + " [...]"
        parts.append(f"<tr><td>{esc(cause)}</td><td class=\"num\">{len(rs)}</td><td>{checks}</td><td>{who}</td>"
                     f"<td><pre>{esc(example)}</pre></td></tr>")
    parts.append("</table>")
    return "\n".join(parts)


def _late(data: ClassData) -> str:
    parts = ['<h2 id="late">Late work</h2>']
    if not data.late:
        return parts[0] + "<p>Nothing late (or no due dates / collect times known here).</p>"
    if not data.late_applied:
        parts.append("<p class=\"note\">The late rule has not been applied to the gradebook yet "
                     "(<code>python -m operator_course.hosting late</code>): what it would add.</p>")
    parts.append("<table class=\"late\"><tr><th>student</th><th>lab</th><th>points</th><th>when</th></tr>")
    for r in data.late:
        parts.append(f"<tr><td>{esc(r.student)}</td><td>{esc(r.lab)}</td><td class=\"num\">{r.points:g}</td>"
                     f"<td>{esc(r.reason)}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts)


def _missing(data: ClassData) -> str:
    missing: dict[str, list[str]] = defaultdict(list)
    for r in data.rows:
        if r.reason == MISSING and r.lab not in missing[r.student]:
            missing[r.student].append(r.lab)
    graded = {r.student for r in data.rows}
    for student in data.roster or []:
        if student not in graded:
            missing[student] = ["every lab (not in the gradebook)"]
    parts = ['<h2 id="missing">Missing submissions</h2>']
    if data.roster is None:
        parts.append("<p class=\"note\">No roster given: only students the grader saw are listed.</p>")
    missing = {s: labs for s, labs in missing.items() if labs}
    if not missing:
        return "\n".join(parts) + "<p>Every student handed in every lab.</p>"
    parts.append("<table class=\"missing\"><tr><th>student</th><th>labs without a notebook</th></tr>")
    for student, labs in sorted(missing.items()):
        parts.append(f"<tr><td>{esc(student)}</td><td>{esc(', '.join(labs))}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts)


def _pending(data: ClassData) -> str:
    rows = [r for r in data.rows if r.status == PENDING]
    parts = ['<h2 id="pending">Checks pending a GPU pass</h2>']
    if not rows:
        return parts[0] + "<p>None.</p>"
    by_check = Counter((r.lab, r.check) for r in rows)
    parts.append("<p>" + ", ".join(f"{esc(lab)} {esc(c)}: {n}" for (lab, c), n in sorted(by_check.items()))
                 + " (grade again on a GPU machine into the same grades folder)</p>")
    parts.append("<table class=\"pending\"><tr><th>student</th><th>lab</th><th>check</th><th>points</th>"
                 "<th>why</th></tr>")
    for r in rows:
        parts.append(f"<tr><td>{esc(r.student)}</td><td>{esc(r.lab)}</td><td>{esc(r.check)}</td>"
                     f"<td class=\"num\">{r.max:g}</td><td>{esc(r.reason.splitlines()[0][:300])}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts)


def _flags(data: ClassData) -> str:
    parts = ['<h2 id="flagged">Flagged submissions</h2>']
    if not data.flags:
        return parts[0] + "<p>None.</p>"
    parts.append("<p>Kept off the public leaderboard. A flag is a reason to look, never a verdict.</p>")
    parts.append("<table class=\"flags\"><tr><th>student</th><th>lab</th><th>flag</th><th>detail</th>"
                 "<th>notebook and logs</th></tr>")
    for f in sorted(data.flags, key=lambda f: (f.student, f.lab, f.what)):
        parts.append(f'<tr class="flagged" data-student="{esc(f.student)}"><td>{esc(f.student)}</td>'
                     f'<td>{esc(f.lab)}</td><td class="flag">{esc(f.what)}</td><td>{esc(f.detail)}</td>'
                     f"<td>{_logs(data, f.student, f.lab)}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts)


def _similar(data: ClassData) -> str:
    parts = ['<h2 id="similar">Similar pairs</h2>', f'<p class="note">{esc(data.similarity_note)}</p>']
    if not data.pairs:
        return "\n".join(parts) + "<p>No pair flagged.</p>"
    for p in data.pairs:
        a, b = p["student_a"], p["student_b"]
        evidence = p.get("evidence", p["score"])
        cells = ", ".join(f"{esc(c['cell'])} {c['score']:.2f} ({c['shared']} shared)" for c in p.get("cells", []))
        parts.append(f'<div class="pair" data-lab="{esc(p["lab"])}" data-a="{esc(a)}" data-b="{esc(b)}">'
                     f"<h3>{esc(p['lab'])}: {esc(a)} and {esc(b)}: evidence {evidence:.2f}</h3>"
                     f"<p>whole lab {p['score']:.2f} of the smaller side's fingerprints ({p.get('shared', '?')} shared, "
                     f"Jaccard {p.get('jaccard', 0):.2f}); per cell: {cells}</p>")
        parts.append(f"<table class=\"spans\"><tr><th>{esc(a)}</th><th>{esc(b)}</th></tr>")
        for m in p.get("matches", []):
            la, lb = m["lines_a"], m["lines_b"]
            parts.append(f"<tr><td>{esc(m['cell_a'])}, lines {la[0]}-{la[1]}<pre>{esc(m['text_a'])}</pre></td>"
                         f"<td>{esc(m['cell_b'])}, lines {lb[0]}-{lb[1]}<pre>{esc(m['text_b'])}</pre></td></tr>")
        parts.append("</table></div>")
    return "\n".join(parts)


def _students(data: ClassData) -> str:
    labs = [lab for lab in data.labs if any(r.lab == lab for r in data.rows)]
    parts = ['<h2 id="students">Students</h2>',
             "<table class=\"students\"><tr><th>student</th><th>pseudonym</th>"
             + "".join(f"<th>{esc(lab)}</th>" for lab in labs) + "<th>total</th><th>feedback</th></tr>"]
    for student in data.students:
        mine = [r for r in data.rows if r.student == student and r.status != "note"]
        cells = []
        for lab in labs:
            got = [r for r in mine if r.lab == lab]
            score = f"{sum(r.points for r in got):g} / {sum(r.max for r in got):g}" if got else "-"
            logs = _logs(data, student, lab)
            cells.append(f"<td>{esc(score)}<br><span class=\"note\">{logs}</span></td>")
        feedback = data.out / "feedback" / f"{student}.md"
        link = _link(f"../feedback/{student}.md", "feedback") if feedback.is_file() else ""
        parts.append(f'<tr id="student-{esc(student)}"><td>{esc(student)}</td><td>{esc(data.names.get(student, ""))}'
                     f"</td>{''.join(cells)}<td class=\"num\">{sum(r.points for r in mine):g}</td><td>{link}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts)


def write(data: ClassData) -> Path:
    folder = data.out / "dashboard"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    m = data.manifest
    summary = (f"<p>Graded {esc(m.get('graded_at', '?'))} on {esc(m.get('device', '?'))}. Students: {len(data.students)}; "
               f"checks pending: {sum(r.status == PENDING for r in data.rows)}; flags: {len(data.flags)}; "
               f"similar pairs: {len(data.pairs)}. Public board: <a href=\"../leaderboard/index.html\">leaderboard</a> "
               f"(pseudonyms, flagged entries left out).</p>")
    nav = "<nav>" + " ".join(f'<a href="#{k}">{v}</a>' for k, v in (
        ("results", "results"), ("causes", "causes of failure"), ("late", "late"), ("missing", "missing"),
        ("pending", "pending"), ("flagged", "flagged"), ("similar", "similar pairs"), ("board", "leaderboard"),
        ("students", "students"))) + "</nav>"
    body = "\n".join([summary, nav, _results(data, folder), _causes(data, folder), _late(data), _missing(data),
                      _pending(data), _flags(data), _similar(data),
                      '<h2 id="board">Leaderboard (real names, flagged entries marked)</h2>',
                      leaderboard.section(data, folder, instructor=True), _students(data)])
    path = folder / "index.html"
    atomic_write(path, page("Instructor dashboard (instructor only)", body))
    return path
