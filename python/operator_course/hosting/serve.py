"""``course serve``: makes the students' accounts, hides the instructor's files from them,
releases the handout, drops from the hub's database the users the roster no longer names, then
becomes the JupyterHub (runs as root: PAM and per-user servers)."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from operator_course.grader.release import release
from . import accounts
from .config import Course
from .spawner import gpus


def private(course: Course) -> list[Path]:
    """What students must not read: solutions and the grader's own shapes (labs/, and the checkout's git
    history, which holds every version of labs/), hub state (passwords, cookie secret), their
    classmates' submissions and grades."""
    history = [course.root / ".git"] if (course.root / ".git").exists() else []
    return [course.labs, *history, course.state, course.submissions, course.grades]


def closed_folder(path: str | Path) -> Path | None:
    """The first folder on the way to ``path`` (``path`` too, if a folder) that other users may not
    enter (no o+x), or the file itself if they may not run it; None if the way is open. Symlinks are
    followed as the kernel follows them, so give both the path as named and its real path."""
    path = Path(os.path.abspath(path))
    for folder in [*reversed(path.parents), path]:
        mode = os.stat(folder).st_mode
        if not mode & 0o001:
            return folder
    return None


def check_students_can_run_python() -> None:
    """Refuses (SystemExit) when the students' servers could not start this Python: e.g. a venv
    made from a pyenv Python under /root (mode 0700). Checked before anything is changed."""
    needed = [sys.executable, os.path.realpath(sys.executable),
              sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], Path(__file__).parents[1]]
    for path in needed:
        folder = closed_folder(path)
        if folder is not None:
            mode = os.stat(folder).st_mode & 0o7777
            raise SystemExit(
                f"course serve: students cannot run the course's Python {sys.executable} "
                f"(really {os.path.realpath(sys.executable)}): {folder} (mode {mode:o}) is closed to other "
                f"users, and they need {path}.\nMake the course's venv from a Python students can run "
                "(e.g. /usr/bin/python3 -m venv .venv, not a pyenv Python under /root), in a checkout they can "
                "read (e.g. /srv/course): README, 'Hosting the course'.")


def forget_removed_users(course: Course, keep: set[str]) -> list[str]:
    """Deletes from the hub's database the users not in ``keep`` (the roster and admins), so the
    hub neither counts them nor, where their Unix account is gone, logs an error for each on every
    start (issue 30); their accounts and homes stay. One whose server still runs (the hub leaves
    servers running when it stops) is kept and named: stop it at /hub/admin, then it goes at the
    next start. Returns the names deleted."""
    if not course.hub_db.exists():
        return []
    from jupyterhub import orm

    try:
        db = orm.new_session_factory(f"sqlite:///{course.hub_db}")()
    except Exception as e:  # e.g. a database of another JupyterHub version: the hub says what to do
        print(f"course serve: not checking the hub's users against the roster: {e}", file=sys.stderr)
        return []
    dropped = []
    try:
        for user in db.query(orm.User).all():
            if user.name in keep:
                continue
            if any(spawner.server is not None for spawner in user._orm_spawners):
                print(f"course serve: {user.name} is not in the roster but their server runs; stop it at /hub/admin",
                      file=sys.stderr)
                continue
            db.delete(user)
            dropped.append(user.name)
        db.commit()
    finally:
        db.close()
    return sorted(dropped)


def prepare(course: Course) -> list[str]:
    if os.geteuid() != 0:
        raise SystemExit("course serve: run as root (PAM logins, one Unix user per student)")
    check_students_can_run_python()
    names = accounts.students(course.roster)
    course.state.mkdir(parents=True, exist_ok=True)
    for path in private(course):
        if path.exists():
            os.chmod(path, 0o700)
    made = accounts.ensure(names, course.passwords)
    if made:
        print(f"made {len(made)} accounts; their passwords are in {course.passwords} (root only)")
    dropped = forget_removed_users(course, {*names, *course.admins})
    if dropped:
        print(f"dropped {len(dropped)} users no longer in the roster from the hub's database: {', '.join(dropped)}")
    release(course.labs, course.handout, chapters="/services/site")  # the hub serves the site there
    for folder, bits in [(course.handout, 0o005), *((p, 0o001) for p in course.handout.parents)]:
        os.chmod(folder, os.stat(folder).st_mode | bits)  # students copy the handout from here
    try:
        probe = accounts.as_user(names[0], [sys.executable, "-c", "import operator_course.lab"],
                                 capture_output=True, text=True).stderr if names else ""
    except PermissionError as e:
        probe = str(e)
    if probe:
        raise SystemExit(f"course serve: student {names[0]} cannot use the course's Python {sys.executable} "
                         f"(really {os.path.realpath(sys.executable)}): {probe.strip()[-500:]}\nPut the course checkout where students can read it "
                         "(e.g. /srv/course, not under /root), with a Python they can run; labs/ and the hub state "
                         "stay root-only.")
    n = gpus()
    if n:
        print(f"{len(names)} students on {n} GPUs ({-(-len(names) // n)} per GPU; "
              f"course.toml allows {course.students_per_gpu})")
        if len(names) > n * course.students_per_gpu:
            print(f"WARNING: more students than {n} GPUs x hub.students_per_gpu={course.students_per_gpu}",
                  file=sys.stderr)
    return names


def serve(course: Course, config_path: Path) -> None:
    config_path = config_path.resolve()  # before the chdir: a relative --config is the caller's
    prepare(course)
    os.chdir(course.state)
    os.environ["OPRT_COURSE_CONFIG"] = str(config_path)
    hub_config = Path(__file__).with_name("hub_config.py")
    os.execv(sys.executable, [sys.executable, "-m", "jupyterhub", "-f", str(hub_config)])
