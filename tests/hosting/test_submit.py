"""Students submit (issue 30): ``submit`` snapshots a lab's saved notebook with the time into the
student's own ~/.course/submitted/, refusing what it should not take; ``collect`` (root) takes the
latest intact submission of each lab over the saved notebook, with the file system's time (not
the manifest's word), and the late rule counts from it. Homes here are temporary folders
(collect's passwd entry points at them); no hub, no kernel."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from operator_course.grader.gradebook import Row
from operator_course.grader.notebook import lab_meta, read
from operator_course.grader.release import release_notebook
from operator_course.grader.submissions import MAX_NOTEBOOK
from operator_course.hosting import collect, config, late
from operator_course.hosting import submit as outboxes
from operator_course.lab import submit as student

ROOT = Path(__file__).resolve().parents[2]
LABS = ROOT / "labs"


@pytest.fixture
def handout(tmp_path):
    folder = tmp_path / "handout"
    folder.mkdir()
    for name in ("01_copy.ipynb", "02_vector_add.ipynb"):
        nbformat.write(release_notebook(read(LABS / name)), str(folder / name))
    return folder


def answered(handout: Path, name: str, text: str):
    """The handout's notebook ``name`` with ``text`` in its first answer cell."""
    nb = read(handout / name)
    next(c for c in nb.cells if "answer" in lab_meta(c)).source = f"# {text}\nx = 1\n"
    return nb


@pytest.fixture
def home(tmp_path, handout):
    home = tmp_path / "alice"
    (home / "labs").mkdir(parents=True)
    for name in ("01_copy.ipynb", "02_vector_add.ipynb"):
        nbformat.write(answered(handout, name, "first try"), str(home / "labs" / name))
    return home


def save(home: Path, handout: Path, text: str, name: str = "01_copy.ipynb") -> bytes:
    nbformat.write(answered(handout, name, text), str(home / "labs" / name))
    return (home / "labs" / name).read_bytes()


def submit(home, handout, *labs, **kw):
    return student.submit(*labs, home=home, handout=handout, say=lambda *_: None, **kw)


def test_submit_snapshots_the_saved_notebook_with_a_manifest(home, handout):
    before = datetime.now(timezone.utc)
    [done] = submit(home, handout, "01_copy")
    saved = (home / "labs" / "01_copy.ipynb").read_bytes()
    box = home / ".course" / "submitted" / "01_copy"
    assert done.notebook.parent == box and done.notebook.read_bytes() == saved
    assert re.fullmatch(r"\d{8}T\d{6}\.\d{6}Z\.ipynb", done.notebook.name)
    manifest = json.loads(done.notebook.with_suffix(".json").read_text())
    assert manifest["sha256"] == hashlib.sha256(saved).hexdigest() and manifest["bytes"] == len(saved)
    assert manifest["lab"] == "01_copy" and manifest["notebook"] == "01_copy.ipynb"
    when = datetime.fromisoformat(manifest["submitted"])
    assert before <= when <= datetime.now(timezone.utc)
    assert datetime.strptime(done.notebook.stem, student.STAMP).replace(tzinfo=timezone.utc) == when
    assert os.stat(home / ".course").st_mode & 0o777 == 0o700  # the student's alone
    assert os.stat(done.notebook).st_mode & 0o777 == 0o600
    assert sorted(p.name for p in box.iterdir()) == [done.notebook.name, done.notebook.with_suffix(".json").name]


def test_the_latest_submission_wins_and_an_unchanged_one_keeps_its_time(home, handout):
    first = submit(home, handout, "01_copy")[0]
    again = submit(home, handout, "01_copy.ipynb")[0]  # by file name; unchanged: no new snapshot
    assert again.unchanged and again.notebook == first.notebook
    save(home, handout, "second try")
    second = submit(home, handout, "01_copy", "02_vector_add")
    assert [s.lab for s in second] == ["01_copy", "02_vector_add"]
    path, manifest = student.latest(home / student.OUTBOX, "01_copy")
    assert path == second[0].notebook and b"second try" in path.read_bytes()
    assert [m["submitted"] for m in student.history(home)["01_copy"]] == \
        [first.manifest["submitted"], second[0].manifest["submitted"]]


def test_submit_refuses_before_writing_anything(home, handout, tmp_path):
    def refused(*labs, **kw) -> str:
        with pytest.raises(student.SubmitError) as e:
            submit(home, handout, *labs, **kw)
        assert not (home / ".course").exists(), "a refused submit wrote something"
        return str(e.value)

    assert "unknown lab '07_nope'" in refused("01_copy", "07_nope")  # all or nothing
    assert "01_copy, 02_vector_add" in refused("07_nope")
    (home / "labs" / "02_vector_add.ipynb").unlink()
    assert "nothing to submit for 02_vector_add: no notebook" in refused("02_vector_add")
    nbformat.write(read(handout / "01_copy.ipynb"), str(home / "labs" / "01_copy.ipynb"))
    assert "answer cells" in refused("01_copy") and "as handed out" in refused("01_copy")
    save(home, handout, "my answer")
    hours_ago = time.time() - 3 * 3600
    os.utime(home / "labs" / "01_copy.ipynb", (hours_ago, hours_ago))
    message = refused("01_copy")
    assert "last saved 3 h ago" in message and "not edits made since" in message and "force" in message
    assert submit(home, handout, "01_copy", force=True)[0].manifest["saved"] == \
        datetime.fromtimestamp(int(hours_ago), timezone.utc).isoformat()
    (home / "labs" / "01_copy.ipynb").write_text("{not json")
    with pytest.raises(student.SubmitError, match="not a notebook"):
        submit(home, handout, "01_copy")
    (home / "labs" / "01_copy.ipynb").write_bytes(b" " * (MAX_NOTEBOOK + 1))
    with pytest.raises(student.SubmitError, match="Clear Outputs"):
        submit(home, handout, "01_copy")
    with pytest.raises(student.SubmitError, match="which lab"):  # no lab named, not in a lab's kernel
        submit(home, handout)


def test_submit_with_no_lab_named_takes_the_notebook_its_kernel_runs(home, handout, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", str(home / "labs" / "02_vector_add.ipynb"))
    assert [s.lab for s in submit(home, handout)] == ["02_vector_add"]
    monkeypatch.setenv("OPRT_VALIDATING", "1")  # a submit cell inside validate's run does nothing
    assert submit(home, handout, "01_copy") == []


def test_the_command_line(home, handout):
    env = {**os.environ, "HOME": str(home), "OPRT_LABS": str(home / "labs"), "OPRT_HANDOUT": str(handout)}
    run = dict(capture_output=True, text=True, env=env, timeout=60)
    ok = subprocess.run([sys.executable, "-m", "operator_course.lab.submit", "01_copy"], **run)
    assert ok.returncode == 0 and "submitted 01_copy" in ok.stdout, ok.stderr
    listed = subprocess.run([sys.executable, "-m", "operator_course.lab.submit", "--list"], **run)
    assert re.search(r"01_copy  submitted 20\d\d-.*\(counts\)", listed.stdout), listed.stdout
    bad = subprocess.run([sys.executable, "-m", "operator_course.lab.submit", "7"], **run)
    assert bad.returncode == 2 and "unknown lab '7'" in bad.stderr
    none = subprocess.run([sys.executable, "-m", "operator_course.lab.submit"], **run)
    assert none.returncode == 2 and "name the lab" in none.stderr


def course_at(tmp_path: Path) -> config.Course:
    (tmp_path / "roster.txt").write_text("student\nalice\n")
    return config.Course(root=tmp_path, roster=tmp_path / "roster.txt", labs=LABS, state=tmp_path / "state",
                         site=tmp_path / "site", handout=tmp_path / "handout", submissions=tmp_path / "submissions",
                         grades=tmp_path / "grades")


def collect_alice(course, home: Path) -> dict:
    me = SimpleNamespace(pw_dir=str(home), pw_uid=os.getuid())
    return collect.collect(course, lookup=lambda name: me)["alice"]


def test_collect_takes_the_latest_submission_over_the_saved_notebook(home, handout, tmp_path):
    course = course_at(tmp_path)
    submit(home, handout, "01_copy")
    submitted = save(home, handout, "submitted try")
    latest = submit(home, handout, "01_copy")[0]
    saved_after = save(home, handout, "edited after submitting")  # saved, never submitted
    record = collect_alice(course, home)
    out = course.submissions / "alice"
    assert (out / "01_copy.ipynb").read_bytes() == submitted == latest.notebook.read_bytes() != saved_after
    entry = record["notebooks"]["01_copy.ipynb"]
    assert entry["from"] == "submitted" and entry["sha256"] == hashlib.sha256(submitted).hexdigest()
    when = datetime.fromisoformat(entry["submitted"])
    assert abs((when - datetime.fromisoformat(latest.manifest["submitted"])).total_seconds()) < 5
    assert "claimed" not in entry  # the manifest's time and the file system's agree
    assert os.stat(out / "01_copy.ipynb").st_mtime == when.timestamp()
    assert "your submission of 01_copy counts" in record["skipped"]["01_copy.ipynb"]
    # a lab never submitted: the saved notebook, as before
    assert record["notebooks"]["02_vector_add.ipynb"]["from"] == "saved"
    assert (out / "02_vector_add.ipynb").read_bytes() == (home / "labs" / "02_vector_add.ipynb").read_bytes()
    assert json.loads((out / "collected.json").read_text()) == record
    # the late rule counts from the submission
    assert late.handed_in(course)[("alice", "01_copy")] == (when, "submitted")
    assert late.handed_in(course)[("alice", "02_vector_add")][1] == "saved"


def test_a_damaged_or_linked_submission_is_skipped_and_a_forged_time_does_not_count(home, handout, tmp_path):
    course = course_at(tmp_path)
    first = save(home, handout, "first")
    submit(home, handout, "01_copy")
    save(home, handout, "second")
    second = submit(home, handout, "01_copy")[0]
    second.notebook.write_bytes(second.notebook.read_bytes().replace(b"second", b"SECOND"))  # edited afterwards
    record = collect_alice(course, home)
    assert (course.submissions / "alice" / "01_copy.ipynb").read_bytes() == first
    assert "do not match the sha256" in record["skipped"][f".course/submitted/01_copy/{second.notebook.name}"]

    # a manifest claiming an earlier time: the file system's time counts, the claim is kept beside it
    manifest = second.notebook.with_suffix(".json")
    forged = json.loads(manifest.read_text())
    forged["submitted"] = "2020-01-01T00:00:00+00:00"
    forged["sha256"] = hashlib.sha256(second.notebook.read_bytes()).hexdigest()
    for path in sorted(manifest.parent.glob("*.json")):
        if path != manifest:
            path.unlink()  # only the forged one left
    manifest.write_text(json.dumps(forged))
    entry = collect_alice(course, home)["notebooks"]["01_copy.ipynb"]
    assert entry["claimed"] == "2020-01-01T00:00:00+00:00"
    when = datetime.fromisoformat(entry["submitted"])
    assert abs((datetime.now(timezone.utc) - when).total_seconds()) < 60
    course.due = {"01_copy": datetime.now(timezone.utc) - timedelta(days=1)}
    rows = [Row("alice", "01_copy", "copy-tilelang", "passed", 3.0, 3.0, "")]
    [row] = late.late_rows(course, rows)
    assert row.reason.startswith(f"submitted {when.isoformat()}, 1 day(s) after"), row.reason

    # a link in the outbox (to a classmate's folder, say) is not followed: the saved notebook counts
    elsewhere = tmp_path / "elsewhere"
    (home / ".course" / "submitted" / "01_copy").rename(elsewhere)
    (home / ".course" / "submitted" / "01_copy").symlink_to(elsewhere)
    record = collect_alice(course, home)
    assert record["skipped"][".course/submitted/01_copy"] == "a symbolic link"
    assert record["notebooks"]["01_copy.ipynb"]["from"] == "saved"


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_a_submission_not_owned_by_the_student_is_skipped(home, handout):
    [done] = submit(home, handout, "01_copy")
    os.chown(done.notebook, 4321, 4321)
    snapshots, skipped = outboxes.latest_submissions(home, os.getuid())
    assert not snapshots and skipped[f".course/submitted/01_copy/{done.notebook.name}"] == "not owned by the student"


def test_the_spawner_tells_the_students_server_and_the_student(tmp_path):
    """The student's server gets $OPRT_LABS and $OPRT_HANDOUT (submit and validate read them), and
    their home a SUBMIT.md with both commands."""
    pytest.importorskip("jupyterhub", reason="the course hub (requirements.txt)")
    import pwd

    from operator_course.hosting.spawner import SUBMIT_NOTE, CourseSpawner

    me = pwd.getpwuid(os.getuid())
    spawner = CourseSpawner(user=SimpleNamespace(name=me.pw_name), handout=str(tmp_path / "handout"),
                            home_labs="course/labs", runtime_root=str(tmp_path / "run"))
    env = spawner.user_env({})
    assert env["OPRT_LABS"] == os.path.join(me.pw_dir, "course/labs")
    assert env["OPRT_HANDOUT"] == str(tmp_path / "handout")
    note = SUBMIT_NOTE.format(labs="course/labs")
    for command in ('lab.validate("01_copy")', 'lab.submit("01_copy")', "python -m operator_course.lab.validate",
                    "python -m operator_course.lab.submit", "~/course/labs/"):
        assert command in note
