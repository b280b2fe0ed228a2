"""The course hub, end to end on loopback: `course serve` starts JupyterHub from nothing for a
roster of two new Unix users; both log in through the login form; their JupyterLab servers
spawn; lab 1 (the handout with the solution's answers, saved through A's server) runs cell by
cell in A's kernel over the WebSocket; A validates it and submits it from that kernel, as a
student would in a cell, then saves an unsolved copy over it (the submission is what is
collected and graded); B reaches neither A's notebook nor the instructor labs; then collect,
grade (sandboxed, with the late rule) and return, and each student reads their feedback in their
home. Each student's server runs in a cgroup of its own (where cgroups are writable); B's server,
killed with -9, is noticed by the hub within seconds and its group removed. The hub, started as a
script's background job starts it (SIGINT ignored), stops on SIGTERM within seconds. Needs root (it
makes users), jupyterhub, the proxy (make hub-deps, which make test runs) and bubblewrap; in CI
(CI=true) their absence fails."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "labs" / "01_copy.ipynb"
PROXY = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE = [sys.executable, "-m", "operator_course.hosting"]
RUNTIME = Path("/run/oprt-course")  # CourseSpawner.runtime_root: each student's kernels' sockets
CGROUP_PARENT = "oprt-course"  # CourseSpawner.cgroup_parent: each student's group, under the hub's cgroup


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "the hub test makes Unix users: run it as root"
    for module in ("jupyterhub", "jupyterhub_idle_culler", "tilelang", "requests"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (requirements.txt)"
    if not PROXY.exists() and not shutil.which("configurable-http-proxy"):
        return "configurable-http-proxy is not installed (make hub-deps)"
    if not shutil.which("bwrap"):
        return "bubblewrap is not installed (the grader's sandbox)"
    return None


def _require():
    reason = _missing()
    if reason and os.environ.get("CI") and os.geteuid() == 0:
        pytest.fail(f"CI must test the course hub: {reason} (.ci/run installs it)")
    if reason:
        pytest.skip(reason)


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def runuser(user: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", user, "--", *argv], capture_output=True, text=True, cwd="/")


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    tag = secrets.token_hex(3)
    a, b = f"oprt-test-a-{tag}", f"oprt-test-b-{tag}"
    due = datetime.now(timezone.utc) - timedelta(hours=1)  # so A's work is one (started) day late
    with course_hub(tmp_path_factory.mktemp("hub"), [a, b], f"""
[labs.01_copy]
due = {due.isoformat(timespec="seconds")}
[late]
rule = "deduct"
per_day = 0.1
""") as running:
        yield {**running, "a": a, "b": b}


@contextlib.contextmanager
def course_hub(tmp: Path, students: list[str], more_toml: str = ""):
    """`course serve` on loopback for a roster of new Unix users (memory_gb 6, processes 400, then
    ``more_toml``); yields base, admin (a requests session with the admin token), token, tmp,
    config, started and passwords. Afterwards: stops their servers, SIGTERMs the hub (which must
    stop within 15 s) and removes the users."""
    _require()
    import requests

    port, hub_port, api_port, site_port = free_ports(4)
    (tmp / "roster.txt").write_text("student\n" + "".join(f"{name}\n" for name in students))
    config = tmp / "course.toml"
    config.write_text(f"""
[course]
roster = "roster.txt"
labs = "{ROOT / 'labs'}"
site = "{ROOT / '_build' / 'html'}"
[hub]
ip = "127.0.0.1"
port = {port}
hub_port = {hub_port}
proxy_api_port = {api_port}
site_port = {site_port}
memory_gb = 6
processes = 400
{more_toml}""")
    token = secrets.token_hex(32)
    opened = let_students_run_python()
    labs_mode = os.stat(ROOT / "labs").st_mode & 0o7777
    log = open(tmp / "hub.log", "wb")
    started = time.monotonic()
    # --config relative to the caller's folder, as `make hub` passes it
    # SIGINT ignored, as in a script's background job (`make hub &`): the hub's services must stop anyway
    proc = subprocess.Popen([*COURSE, "serve", "--config", config.name], cwd=tmp, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "OPRT_HUB_ADMIN_TOKEN": token}, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    base = f"http://127.0.0.1:{port}"
    admin = requests.Session()
    admin.headers["Authorization"] = f"token {token}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                if admin.get(f"{base}/hub/api/users", timeout=5).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"the hub did not start:\n{(tmp / 'hub.log').read_text()[-4000:]}")
            time.sleep(0.5)
        yield {"base": base, "admin": admin, "token": token, "tmp": tmp, "config": config,
               "started": started, "passwords": dict(line.split() for line in
                                                     (tmp / "_build/course/passwords.txt").read_text().splitlines())}
    finally:
        for user in students:
            try:
                admin.delete(f"{base}/hub/api/users/{user}/server", timeout=30)
            except requests.RequestException:
                pass
        stopping = time.monotonic()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=30)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        stopped = time.monotonic() - stopping
        print(f"hub test: the hub stopped {stopped:.1f} s after SIGTERM")
        for user in students:
            try:
                uid = pwd.getpwnam(user).pw_uid
            except KeyError:
                continue
            for pid in subprocess.run(["ps", "-o", "pid=", "-U", str(uid)], capture_output=True,
                                      text=True).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["userdel", "--remove", user], capture_output=True)
            shutil.rmtree(RUNTIME / user, ignore_errors=True)
            for folder in student_cgroups(user):  # a group the hub did not remove (emptied above)
                try:
                    folder.rmdir()
                except OSError:
                    pass
        for folder in {group.parent for group in student_cgroups("-")}:  # shared: goes once empty
            try:
                folder.rmdir()
            except OSError:
                pass
        os.chmod(ROOT / "labs", labs_mode)
        for folder, mode in opened.items():
            os.chmod(folder, mode)
        log.close()
    # JupyterHub waited 30 s for each service that ignored SIGINT: 40-73 s (issue 30)
    assert stopped < 15, f"the hub took {stopped:.0f} s to stop after SIGTERM"


def student_cgroups(user: str) -> list[Path]:
    """The student's group in each hierarchy, where the hub (a child of this process, in its
    cgroups) makes them: under its own cgroup, CGROUP_PARENT/<user>."""
    from operator_course.grader import cgroups

    return [base / CGROUP_PARENT / user for base in cgroups.bases()]


def server_pid(user: str) -> int:
    """The pid of the student's JupyterLab server (python -m jupyterhub.singleuser, as them)."""
    uid = pwd.getpwnam(user).pw_uid
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid == uid and \
                    b"jupyterhub.singleuser" in (proc / "cmdline").read_bytes():
                return int(proc.name)
        except OSError:
            continue
    raise AssertionError(f"no server process of {user}")


def let_students_run_python() -> dict[Path, int]:
    """The students' servers run this Python; where it lies under a folder only root may enter
    (pyenv in /root), the test lets others pass through (o+x, no listing) and says so; returns
    the modes to restore. A real course puts its Python where students can run it (README)."""
    opened = {}
    for path in {Path(os.path.realpath(sys.executable)), Path(sys.base_prefix).resolve()}:
        for folder in path.parents:
            mode = os.stat(folder).st_mode & 0o7777
            if not mode & 0o001 and folder not in opened:
                opened[folder] = mode
                os.chmod(folder, mode | 0o001)
    if opened:
        print(f"test_hub: let other users pass through {sorted(map(str, opened))} for the test's duration")
    return opened


def login(base: str, user: str, password: str):
    import requests

    s = requests.Session()
    page = s.get(f"{base}/hub/login", timeout=30)
    xsrf = re.search(r'name="_xsrf"\s+value="([^"]+)"', page.text).group(1)
    r = s.post(f"{base}/hub/login", data={"username": user, "password": password, "_xsrf": xsrf},
               allow_redirects=False, timeout=60)
    return s, r


def test_the_course_hub_from_roster_to_returned_feedback(hub):
    from labs.submissions import parse, student_notebook
    from test_jupyterlab import execute_all

    from operator_course.grader.notebook import read

    base, admin, a, b = hub["base"], hub["admin"], hub["a"], hub["b"]
    times = {"hub up": time.monotonic() - hub["started"]}

    # accounts: homes only their owner reads
    for user in (a, b):
        home = Path(pwd.getpwnam(user).pw_dir)
        assert os.stat(home).st_mode & 0o777 == 0o700 and os.stat(home).st_uid == pwd.getpwnam(user).pw_uid

    # both log in through the login form; a wrong password does not
    sessions = {}
    for user in (a, b):
        s, r = login(base, user, hub["passwords"][user])
        assert r.status_code == 302, (user, r.status_code, r.text[-500:])
        assert any(c.name.startswith("jupyterhub-") for c in s.cookies), s.cookies
        sessions[user] = s
    assert login(base, a, "not-the-password")[1].status_code == 403

    # their servers spawn (as them), with the handout in their home
    for user in (a, b):
        assert admin.post(f"{base}/hub/api/users/{user}/server", timeout=60).status_code in (201, 202)
    deadline = time.time() + 150
    while not all(admin.get(f"{base}/hub/api/users/{u}", timeout=30).json()["servers"].get("", {}).get("ready")
                  for u in (a, b)):
        assert time.time() < deadline, "the servers did not become ready"
        time.sleep(1)
    times["servers ready"] = time.monotonic() - hub["started"]
    for user in (a, b):
        assert runuser(user, "test", "-r", f"{pwd.getpwnam(user).pw_dir}/labs/01_copy.ipynb").returncode == 0
        assert "services/site" in runuser(user, "cat", f"{pwd.getpwnam(user).pw_dir}/COURSE.md").stdout
    if (ROOT / "_build" / "html" / "index.html").exists():  # the site, from the hub's sub-path
        index = admin.get(f"{base}/services/site/index.html", timeout=30)  # Jupyter Book's: a relative redirect
        assert index.status_code == 200 and 'url=book/intro.html"' in index.text, index.text[:300]
        page = admin.get(f"{base}/services/site/book/intro.html", timeout=30)
        assert page.status_code == 200 and "Operator Runtime" in page.text

    # A saves the solved lab through their server and runs every code cell in their kernel
    nb = student_notebook(read(LAB), parse(ROOT / "tests" / "labs" / "control" / "solved.py"))
    user_url = f"{base}/user/{a}"
    saved = admin.put(f"{user_url}/api/contents/labs/01_copy.ipynb", json={"type": "notebook", "content": nb},
                      timeout=60)
    assert saved.status_code in (200, 201), saved.text[-500:]
    kernel = admin.post(f"{user_url}/api/kernels", json={}, timeout=60).json()
    home_a = pwd.getpwnam(a).pw_dir
    probe = "import os, resource; print('whoami', os.getuid(), resource.getrlimit(resource.RLIMIT_NPROC)[0])"
    cells = [f"os = __import__('os'); os.chdir({home_a + '/labs'!r})", probe] + [
        c.source for c in nb.cells if c.cell_type == "code"]
    replies = asyncio.run(execute_all(user_url, hub["token"], kernel["id"], cells))
    times["lab 1 ran"] = time.monotonic() - hub["started"]
    failed = [(cells[i][:60], r.get("ename"), r.get("evalue")) for i, r in enumerate(replies) if r["status"] != "ok"]
    assert not failed
    assert f"whoami {pwd.getpwnam(a).pw_uid} 400" in replies[1]["stdout"]
    connection = RUNTIME / a / f"kernel-{kernel['id']}.json"
    assert json.loads(connection.read_text())["transport"] == "ipc"  # no TCP ports to collide on
    assert any("copy (TileLang): passed" in r["stdout"] for r in replies)

    # A validates and submits from their kernel, as a student would in a cell; then saves an unsolved
    # copy over their notebook: what counts is the submission
    student_cells = ["from operator_course import lab\nv = lab.validate('01_copy')\n"
                     "print('validated', v.earned, v.possible)",
                     "done = lab.submit('01_copy')\nprint('snapshot', done[0].notebook)"]
    validated, submitted = asyncio.run(execute_all(user_url, hub["token"], kernel["id"], student_cells))
    assert validated["status"] == submitted["status"] == "ok", (validated, submitted)
    assert "passed       copy-tilelang" in validated["stdout"] and "Hidden checks are graded later" in \
        validated["stdout"], validated["stdout"]
    earned, possible = map(float, re.search(r"validated (\S+) (\S+)", validated["stdout"]).groups())
    assert earned == possible > 0 and "copy-tilelang-again" not in validated["stdout"], validated["stdout"]
    snapshot = Path(re.search(r"^snapshot (\S+)$", submitted["stdout"], re.M).group(1))
    assert snapshot.parent == Path(home_a) / ".course" / "submitted" / "01_copy"
    assert os.stat(snapshot).st_uid == pwd.getpwnam(a).pw_uid
    listed = runuser(a, "env", f"HOME={home_a}", sys.executable, "-m", "operator_course.lab.submit", "--list")
    assert "01_copy  submitted " in listed.stdout and "(counts)" in listed.stdout, listed.stdout + listed.stderr
    unsolved = student_notebook(read(LAB), {"answer": "none", "solved": [], "body": ""})
    assert admin.put(f"{user_url}/api/contents/labs/01_copy.ipynb", json={"type": "notebook", "content": unsolved},
                     timeout=60).status_code == 200
    times["validated and submitted"] = time.monotonic() - hub["started"]

    # B reaches neither A's notebook (files, or A's server with B's login) nor the solutions
    assert runuser(b, "cat", f"{home_a}/labs/01_copy.ipynb").returncode != 0
    assert runuser(b, "ls", home_a).returncode != 0
    assert runuser(b, "cat", str(LAB)).returncode != 0
    assert runuser(b, "ls", str(ROOT / "labs")).returncode != 0
    stolen = sessions[b].get(f"{user_url}/api/contents/labs/01_copy.ipynb", timeout=60)
    assert '"cells"' not in stolen.text and stolen.status_code != 200 or "/hub/login" in stolen.url, \
        (stolen.status_code, stolen.url)
    # B deletes their copy: a missing submission
    assert runuser(b, "rm", f"{pwd.getpwnam(b).pw_dir}/labs/01_copy.ipynb").returncode == 0

    # each server runs in its student's own cgroup (memory_gb for all their processes together)
    if f"No cgroup for {a}" not in (hub["tmp"] / "hub.log").read_text():
        for user in (a, b):
            lines = Path(f"/proc/{server_pid(user)}/cgroup").read_text()
            assert f"/{CGROUP_PARENT}/{user}\n" in lines, lines
        groups = student_cgroups(a)
        limit = next((g / name for g in groups for name in ("memory.max", "memory.limit_in_bytes")
                      if (g / name).exists()), None)
        assert limit is not None and int(limit.read_text()) == 6 << 30, groups
    else:
        print("hub test: no cgroups here (the hub log says why); per-process limits only")
        groups = []
    # B's server dies (-9): the hub notices within seconds (poll_interval), the student gets "start
    # my server" instead of a 503, and B's group goes with whatever was left in it
    os.kill(server_pid(b), signal.SIGKILL)
    killed = time.monotonic()
    while admin.get(f"{base}/hub/api/users/{b}", timeout=30).json()["servers"].get("", {}).get("ready"):
        assert time.monotonic() - killed < 15, "the hub did not notice B's server died"
        time.sleep(0.2)
    times["B's killed server noticed after"] = time.monotonic() - killed
    deadline = time.monotonic() + 10
    while groups and any(group.exists() for group in student_cgroups(b)):
        assert time.monotonic() < deadline, "B's cgroup outlived their server"
        time.sleep(0.2)

    # collect, grade (sandboxed; the late rule), return
    config, tmp = hub["config"], hub["tmp"]
    run = dict(capture_output=True, text=True, cwd=tmp, timeout=600)
    collected = subprocess.run([*COURSE, "collect", "--config", str(config)], **run)
    assert collected.returncode == 0, collected.stderr[-2000:]
    record = json.loads((tmp / "submissions" / a / "collected.json").read_text())
    assert record["notebooks"]["01_copy.ipynb"]["lab"] == "01_copy"
    assert record["notebooks"]["01_copy.ipynb"]["from"] == "submitted"  # not the unsolved copy saved since
    assert (tmp / "submissions" / a / "01_copy.ipynb").read_bytes() == snapshot.read_bytes()
    assert not (tmp / "submissions" / b / "01_copy.ipynb").exists()
    graded = subprocess.run([*COURSE, "grade", "--config", str(config), "--", "--lab", "01_copy", "--jobs", "2",
                             "--timeout", "120"], **run)
    assert graded.returncode == 0, graded.stderr[-3000:]
    times["graded"] = time.monotonic() - hub["started"]
    with open(tmp / "grades" / "gradebook.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    mine = [r for r in rows if r["student"] == a and r["check"] not in ("late", "notes")]
    earned = sum(float(r["points"]) for r in mine)
    assert {r["check"]: r["status"] for r in mine}["copy-tilelang"] == "passed"
    late = [r for r in rows if r["student"] == a and r["check"] == "late"]
    assert len(late) == 1 and float(late[0]["points"]) == pytest.approx(-round(earned * 0.1, 2)), late
    theirs = [r for r in rows if r["student"] == b and r["lab"] == "01_copy" and r["status"] != "note"]
    assert theirs and all(float(r["points"]) == 0 and "no notebook submitted" in r["reason"] for r in theirs)
    returned = subprocess.run([*COURSE, "return", "--config", str(config)], **run)
    assert returned.returncode == 0, returned.stderr[-2000:]
    for user in (a, b):
        path = f"{pwd.getpwnam(user).pw_dir}/feedback/grades.md"
        assert f"# Feedback for {user}" in runuser(user, "cat", path).stdout
        assert os.stat(path).st_uid == pwd.getpwnam(user).pw_uid
    assert runuser(b, "cat", f"{home_a}/feedback/grades.md").returncode != 0
    times["returned"] = time.monotonic() - hub["started"]
    print("hub test, seconds since start:", {k: round(v, 1) for k, v in times.items()})
