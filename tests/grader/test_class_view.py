"""The class view (grader/class_view.py, leaderboard.py, dashboard.py) on a small graded class
(grader/class_view_class.py: gradebook, timings from the harness's own Measurement and
ImpossibleTiming, a planted FLAGGED entry, an impossible timing, a timing faster than the ceiling,
two planted similar pairs, late, missing and pending work), and once through the grader itself
(a grading run writes the class view with the grades)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from class_view_class import (CEILING, FLAGGED, LAB, PLANTED_PAIRS, PUBLIC, REFERENCE_PERCENT, ROSTER,
                                     TIMED, build_class, impossible_message, measurement)
from operator_course.grader import class_data as CD
from operator_course.grader import class_view as CV
from operator_course.grader.dashboard import diagnosis
from operator_course.grader.gradebook import Row

ROOT = Path(__file__).resolve().parents[2]


class Page(HTMLParser):
    """What a test needs of a page: its tables' rows (class, data-name, cells' text) and images."""

    def __init__(self, text: str):
        super().__init__()
        self.rows: list[dict] = []
        self.images: list[str] = []
        self.links: list[str] = []
        self._row = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr":
            self._row = {"class": attrs.get("class", ""), "name": attrs.get("data-name"), "text": ""}
            self.rows.append(self._row)
        elif tag == "img":
            self.images.append(attrs["src"])
        elif tag == "a":
            self.links.append(attrs["href"])

    def handle_endtag(self, tag):
        if tag == "tr":
            self._row = None

    def handle_data(self, data):
        if self._row is not None:
            self._row["text"] += data + " "


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class_view")
    paths = build_class(root)
    written = CV.build(paths["out"], paths["submissions"], paths["labs"], ROSTER)
    data = CD.load(paths["out"])
    return {**paths, "written": written, "names": data.names,
            "public": written["leaderboard"].read_text(), "dashboard": written["dashboard"].read_text()}


# --- the harness's result, as data --------------------------------------------------------------

def test_timings_are_read_from_the_harness_summary_exactly():
    m = measurement(61.0, 85.0)
    t = CD.timing_from_result({"error": None, "ratio": m.ratio, "summary": m.summary}, "copy")
    assert t["unit"] == "GB/s" and t["ceiling"] == CEILING and t["ratio"] == pytest.approx(m.ratio)
    assert [s["shape"] for s in t["shapes"]] == [list(s.shape) for s in m.shapes]
    for got, want in zip(t["shapes"], m.shapes):
        assert got["rate"] == pytest.approx(want.rate(want.ours_ms), rel=1e-3)
        assert got["torch_rate"] == pytest.approx(want.rate(want.torch_ms), rel=1e-3)


def test_a_matmul_timing_is_in_tflops_of_the_tensor_core_peak():
    import torch
    from operator_runtime_testing.verified_timing import Measurement, ShapeTiming

    m = Measurement("matmul", "cuda", torch.float32, ceiling=744.0)
    for shape in ((4096, 4096, 4096), (2595, 3269, 2783)):
        flops = 2 * shape[0] * shape[1] * shape[2]
        m.shapes.append(ShapeTiming(shape, flops / 41e9, flops / 52e9, 0, flops))  # 41 and 52 TFLOP/s
    t = CD.timing_from_result({"ratio": m.ratio, "summary": m.summary}, "matmul")
    assert t["unit"] == "TFLOP/s" and t["ceiling"] == 744.0
    assert [s["rate"] for s in t["shapes"]] == [41.0, 41.0] and t["shapes"][1]["shape"] == [2595, 3269, 2783]


def test_refused_timings_keep_their_flag_and_other_failures_are_no_timing():
    t = CD.timing_from_result({"error": impossible_message(), "flag": "impossible timing"}, "copy")
    assert t["flag"] == "impossible timing" and t["shapes"] == []
    assert t["impossible"] == {"shape": [1 << 26], "rate": 53687.0} and t["ceiling"] == CEILING
    wrong = CD.timing_from_result({"error": "copy: timed call 1 ... wrong result", "flag": "wrong result while timed"},
                                  "copy")
    assert wrong["flag"] == "wrong result while timed" and not wrong["shapes"]
    assert CD.timing_from_result({"error": 'line 3: error: "x" undefined'}, "copy") is None  # a compile error
    assert CD.timing_from_result({"error": None, "ratio": 0.5, "summary": "no harness line"}, "copy") is None
    assert CD.timing_from_result(None, "copy") is None


def test_score_verdict_keeps_the_timing_on_the_row():
    from operator_course.grader.assemble import CheckSpec
    from operator_course.grader.score import Job, verdict

    spec = CheckSpec(4, "copy-performance", 2.0, "performance", "copy", "CUDA_SOURCE", True)
    m = measurement(70.0)
    row = verdict(spec, Job(spec, "performance", {}, [], {"error": None, "ratio": m.ratio, "summary": m.summary}),
                  None, "s", LAB)
    assert row.status == "passed" and row.timing["shapes"][0]["rate"] == pytest.approx(2100.0)  # 0.82x torch
    job = Job(spec, "performance", {}, [], {"error": impossible_message(), "flag": "impossible timing"})
    flagged = verdict(spec, job, None, "s", LAB)
    assert flagged.reason.startswith("FLAGGED") and flagged.timing["flag"] == "impossible timing"


def test_timings_merge_across_runs_as_the_gradebook_does(tmp_path):
    from operator_course.grader.gradebook import merge

    def row(student, answers, status="passed", timing=None):
        r = Row(student, LAB, "copy-performance", status, 2.0 if status == "passed" else 0.0, 2.0, "", answers, "cuda")
        if timing:
            r.timing = timing
        return r

    t1, t2 = ({"op": "copy", "unit": "GB/s", "ceiling": 3000.0, "ratio": r, "shapes": [
        {"shape": [8], "rate": 100.0 * r, "torch_rate": 100.0, "ratio": r}], "flag": None} for r in (0.5, 0.9))
    first = [row("a", "h1", timing=t1), row("b", "h1", timing=t1)]
    CD.record_timings(tmp_path, first, first)
    # a CPU pass: a's same answers pending (the GPU's result and timing kept), b's new answers pending (gone)
    second = [row("a", "h1", "pending"), row("b", "h2", "pending")]
    merged = merge(first, second)
    entries = CD.record_timings(tmp_path, merged, second)
    assert set(entries) == {f"a/{LAB}/copy-performance"} and entries[f"a/{LAB}/copy-performance"]["ratio"] == 0.5
    # a GPU pass of a's new answers replaces the timing
    third = [row("a", "h3", timing=t2)]
    entries = CD.record_timings(tmp_path, merge(merged, third), third)
    assert entries[f"a/{LAB}/copy-performance"]["ratio"] == 0.9 and entries[f"a/{LAB}/copy-performance"]["answers"] == "h3"
    assert json.loads((tmp_path / "timings.json").read_text())["entries"] == entries


def test_pseudonyms_are_stable_keyed_and_distinct(tmp_path, monkeypatch):
    monkeypatch.delenv("OPRT_PSEUDONYM_KEY", raising=False)
    key = CD.course_key(tmp_path)
    assert CD.course_key(tmp_path) == key and (tmp_path / CD.KEY_FILE).stat().st_mode & 0o777 == 0o600
    students = [f"student{i}" for i in range(300)]
    names = CD.pseudonyms(students, key)
    assert len(set(names.values())) == 300 and names == CD.pseudonyms(reversed(students), key)
    assert all(re.fullmatch(r"[a-z]+-[a-z]+-\d\d(-[0-9a-f]{4})?", n) for n in names.values())
    assert CD.pseudonyms(students, b"another course") != names  # without the key, no telling who is who


def test_diagnosis_groups_by_the_judges_hint_or_the_kind_of_message():
    a = "copy is wrong for shape (4099,) float32: 3 of 4099 elements differ.\nHint: guard the last tile: i < n."
    b = "copy is wrong for shape (77,) float32: 7 of 77 elements differ.\nHint: guard the last tile: i < n."
    assert diagnosis(a) == diagnosis(b) == "Hint: guard the last tile: i < n"
    assert diagnosis('line 7 of CUDA_SOURCE: error: identifier "foo" is undefined') == \
        diagnosis('line 9 of CUDA_SOURCE: error: identifier "bar" is undefined')
    assert diagnosis("copy: 0.31x torch (geometric mean; ...); this check needs 0.50x torch") == \
        "slower than the check needs (0.50x torch)"
    assert diagnosis("FLAGGED for the instructor (impossible timing): copy timed at 9 GB/s") == \
        "FLAGGED for the instructor (impossible timing)"


# --- the pages ----------------------------------------------------------------------------------

def _images_exist(page: Page, folder: Path) -> None:
    assert page.images
    for src in page.images:
        if src.startswith("data:image/png;base64,"):
            continue
        path = folder / src
        assert path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", src


def test_the_public_board_names_no_one_and_shows_no_flagged_entry(graded):
    names, text = graded["names"], graded["public"]
    page = Page(text)
    entries = [r for r in page.rows if "entry" in r["class"]]
    assert {r["name"] for r in entries} == {names[s] for s in PUBLIC}
    for student in ROSTER:  # no real name anywhere on the page
        assert student not in text, student
    for student in FLAGGED:
        assert names[student] not in text, student
    order = [r["name"] for r in entries]  # ranked by % of the ceiling
    assert order == [names[s] for s in sorted(PUBLIC, key=lambda s: -TIMED[s])]
    best = entries[0]["text"]
    assert f"{TIMED['honest_1']:.1f}%" in best and f"{TIMED['honest_1'] / REFERENCE_PERCENT:.2f}x" in best
    baselines = {r["name"] for r in page.rows if "baseline" in r["class"]}
    assert baselines == {"torch", "reference"}
    _images_exist(page, graded["written"]["leaderboard"].parent)


def test_the_dashboard_marks_every_flag_and_lists_the_class(graded):
    text, names = graded["dashboard"], graded["names"]
    page = Page(text)
    _images_exist(page, graded["written"]["dashboard"].parent)
    assert len(page.images) >= 3  # results per lab, causes of failure, the roofline
    flagged_rows = [r for r in page.rows if "flagged" in r["class"]]
    for student in FLAGGED:
        assert any(student in r["text"] for r in flagged_rows), student
    for what in ("impossible timing", "faster than the ceiling", "wrong result while timed", "similar"):
        assert what in text, what
    board = [r for r in page.rows if "entry" in r["class"]]  # the instructor's board: everyone timed, by name
    assert {r["name"] for r in board} == set(TIMED)
    assert all(names[s] in text for s in TIMED)
    for lab, a, b in PLANTED_PAIRS:
        assert f'data-lab="{lab}" data-a="{a}" data-b="{b}"' in text, (a, b)
    similar = text.split('id="similar"')[1].split("<h2")[0]
    assert similar.count("<pre>") >= 2 * len(PLANTED_PAIRS)  # matching spans, side by side
    assert "Hint: the kernel never wrote the output: store the tile into Y" in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text and "<img src=x" not in text  # a student's text, escaped
    for section in ("missing", "late", "pending"):
        assert f'id="{section}"' in text
    missing = text.split('id="missing"')[1].split("<h2")[0]
    assert "ivan" in missing and "zoe" in missing and "honest_1" not in missing
    assert "bob_late" in text.split('id="late"')[1].split("<h2")[0]
    assert "copy-extra" in text.split('id="pending"')[1].split("<h2")[0]
    folder = graded["written"]["dashboard"].parent
    logs = [href for href in page.links if href.startswith("../logs/")]
    assert "../logs/honest_1/01_copy/executed.ipynb" in logs
    assert all((folder / href).resolve().is_file() for href in logs)
    feedback = [href for href in page.links if href.startswith("../feedback/")]
    assert len(feedback) == len(ROSTER) - 1 and all((folder / href).resolve().is_file() for href in feedback)


def test_each_student_is_told_their_own_pseudonym_once(graded):
    for student, name in graded["names"].items():
        path = graded["out"] / "feedback" / f"{student}.md"
        if not path.exists():
            assert student == "zoe"
            continue
        text = path.read_text()
        assert text.startswith(f"# Feedback for {student}") and text.count(CD.FEEDBACK_MARK) == 1
        assert f"you appear as **{name}**" in text
    CV.build(graded["out"])  # rebuilt (no gradebook.write between): still one section
    assert (graded["out"] / "feedback" / "honest_1.md").read_text().count(CD.FEEDBACK_MARK) == 1


def test_the_similarity_list_is_written_with_the_grades(graded):
    data = json.loads((graded["out"] / CD.SIMILARITY).read_text())
    assert {(p["lab"], p["student_a"], p["student_b"]) for p in data["pairs"]} == PLANTED_PAIRS


def test_a_grading_run_writes_the_class_view(tmp_path):
    """The grader itself (no student code runs: one notebook is malformed, one student is missing)
    ends its run with the class view."""
    labs, subs, out = tmp_path / "labs", tmp_path / "class", tmp_path / "grades"
    labs.mkdir()
    (labs / f"{LAB}.ipynb").write_bytes((ROOT / "labs" / f"{LAB}.ipynb").read_bytes())
    (labs / "secret_shapes.py").write_bytes((ROOT / "labs" / "secret_shapes.py").read_bytes())
    (subs / "mallory").mkdir(parents=True)
    (subs / "mallory" / f"{LAB}.ipynb").write_bytes(b"\x80 not a notebook")
    (tmp_path / "roster.txt").write_text("mallory\nabsent\n")
    done = subprocess.run([sys.executable, "-m", "operator_course.grader.grade", str(subs), "--labs", str(labs),
                           "-o", str(out), "--roster", str(tmp_path / "roster.txt"), "--jobs", "1",
                           "--unsafe-no-sandbox", "--per-process-limits"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "class view:" in done.stderr, done.stderr[-3000:]
    assert json.loads((out / "timings.json").read_text())["entries"] == {}
    board = (out / "leaderboard" / "index.html").read_text()
    assert "No performance check has been timed yet" in board and "mallory" not in board
    dashboard = (out / "dashboard" / "index.html").read_text()
    missing = dashboard.split('id="missing"')[1].split("<h2")[0]
    assert "absent" in missing
    assert "malformed notebook" in dashboard
    assert "you appear as **" in (out / "feedback" / "mallory.md").read_text()


def test_the_command_rebuilds_the_class_view_from_the_grades_alone(graded, tmp_path):
    """`python -m operator_course.grader.class_view OUT --roster R`: no submissions, so the similarity
    list is the one the grading run wrote."""
    import shutil

    out = tmp_path / "grades"
    shutil.copytree(graded["out"], out)
    for folder in ("leaderboard", "dashboard"):
        shutil.rmtree(out / folder)
    roster = tmp_path / "roster.txt"
    roster.write_text("\n".join(ROSTER) + "\n")
    assert CV.main([str(out), "--roster", str(roster)]) == 0
    assert (out / "leaderboard" / "index.html").read_text() == graded["public"]
    dashboard = (out / "dashboard" / "index.html").read_text()
    assert all(f'data-a="{a}" data-b="{b}"' in dashboard for _, a, b in PLANTED_PAIRS)
    assert CD.load(out).names == graded["names"]  # the same key: the same pseudonyms
