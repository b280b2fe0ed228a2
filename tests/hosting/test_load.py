"""A class on loopback (issue 30): N new students at once log in through the form, spawn their
server from the hub's page, save lab 1 with answers, run its first code cells in their kernel over
the WebSocket and submit it from a cell, while a probe times the hub's API all along. Asserted:
every student's cells pass and their submission lands in their outbox; the hub answers within
5 s throughout. Printed: per student the time to log in, to a ready server, to run the cells and
to submit, and their memory (their cgroup's peak where there is one, else the sum of their
processes' RSS); the API's slowest answer.

    OPRT_LOAD_STUDENTS=5 OPRT_LOAD_CELLS=3 pytest tests/hosting/test_load.py -s

N is 2 by default (CI); OPRT_LOAD_CELLS (default 3: imports, the TileLang answer, its check) of
lab 1's code cells run. Needs what test_hub.py needs."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import secrets
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from test_hub import LAB, ROOT, course_hub, login, student_cgroups

STUDENTS = int(os.environ.get("OPRT_LOAD_STUDENTS", "2"))
CELLS = int(os.environ.get("OPRT_LOAD_CELLS", "3"))


def memory_mb(user: str) -> tuple[float | None, float]:
    """The student's cgroup peak (None without one) and the sum of their processes' RSS, in MB."""
    peak = None
    for group in student_cgroups(user):
        for name in ("memory.max_usage_in_bytes", "memory.peak"):
            if (group / name).exists():
                peak = int((group / name).read_text()) / 2**20
    uid, rss = pwd.getpwnam(user).pw_uid, 0
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid == uid:
                rss += next(int(line.split()[1]) for line in (proc / "status").read_text().splitlines()
                            if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return peak, rss / 1024


def test_a_class_logs_in_spawns_runs_lab_1_and_submits(tmp_path_factory):
    from labs.submissions import parse, student_notebook
    from test_jupyterlab import execute_all

    from operator_course.grader.notebook import read

    tag = secrets.token_hex(3)
    names = [f"oprt-load-{i}-{tag}" for i in range(STUDENTS)]
    nb = student_notebook(read(LAB), parse(ROOT / "tests" / "labs" / "control" / "solved.py"))
    first_cells = [c.source for c in nb.cells if c.cell_type == "code"][:CELLS]
    with course_hub(tmp_path_factory.mktemp("load"), names) as hub:
        base, admin = hub["base"], hub["admin"]
        api_times, probing = [], threading.Event()

        def probe():  # what every other user of the hub waits meanwhile
            while not probing.is_set():
                t = time.monotonic()
                admin.get(f"{base}/hub/api/users", timeout=60)
                api_times.append(time.monotonic() - t)
                time.sleep(0.25)

        def student(name: str) -> dict:
            t0 = time.monotonic()
            session, r = login(base, name, hub["passwords"][name])
            assert r.status_code == 302, (name, r.status_code)
            t_login = time.monotonic()
            spawn = session.get(f"{base}/hub/spawn/{name}", allow_redirects=False, timeout=120)
            assert spawn.status_code == 302, (name, spawn.status_code, spawn.text[-300:])
            while not admin.get(f"{base}/hub/api/users/{name}", timeout=60).json()["servers"].get("", {}).get("ready"):
                assert time.monotonic() - t_login < 300, f"{name}'s server was not ready in 300 s"
                time.sleep(0.5)
            t_ready = time.monotonic()
            url = f"{base}/user/{name}"
            saved = admin.put(f"{url}/api/contents/labs/01_copy.ipynb", json={"type": "notebook", "content": nb},
                              timeout=120)
            assert saved.status_code in (200, 201), saved.text[-300:]
            kernel = admin.post(f"{url}/api/kernels", json={}, timeout=120).json()
            home = pwd.getpwnam(name).pw_dir
            cells = [f"os = __import__('os'); os.chdir({home + '/labs'!r})", *first_cells]
            replies = asyncio.run(execute_all(url, hub["token"], kernel["id"], cells))
            failed = [(cells[i][:60], r.get("ename"), r.get("evalue")) for i, r in enumerate(replies)
                      if r["status"] != "ok"]
            assert not failed, (name, failed)
            t_cells = time.monotonic()
            submitted, = asyncio.run(execute_all(url, hub["token"], kernel["id"], [
                "from operator_course import lab\ndone = lab.submit('01_copy')\nprint('snapshot', done[0].notebook)"]))
            assert submitted["status"] == "ok" and "snapshot" in submitted["stdout"], (name, submitted)
            snapshot = Path(submitted["stdout"].split("snapshot", 1)[1].strip())
            assert snapshot.parent == Path(home) / ".course" / "submitted" / "01_copy" and snapshot.exists()
            t_done = time.monotonic()
            peak, rss = memory_mb(name)
            return {"student": name, "login_s": t_login - t0, "ready_s": t_ready - t_login,
                    "cells_s": t_cells - t_ready, "submit_s": t_done - t_cells, "total_s": t_done - t0,
                    "cgroup_peak_mb": peak, "rss_mb": rss}

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        started = time.monotonic()
        try:
            with ThreadPoolExecutor(STUDENTS) as pool:
                results = list(pool.map(student, names))
        finally:
            probing.set()
            prober.join(timeout=60)
        wall = time.monotonic() - started

    print(f"\nload test: {STUDENTS} students, the first {CELLS} code cells of lab 1, {wall:.0f} s in all "
          f"({os.cpu_count()} CPUs)")
    for r in results:
        peak = "-" if r["cgroup_peak_mb"] is None else f"{r['cgroup_peak_mb']:.0f}"
        print(f"  {r['student']}: login {r['login_s']:.1f} s, server ready {r['ready_s']:.1f} s, cells "
              f"{r['cells_s']:.1f} s, submit {r['submit_s']:.1f} s; memory: cgroup peak {peak} MB, RSS {r['rss_mb']:.0f} MB")
    for key in ("ready_s", "cells_s", "total_s"):
        values = [r[key] for r in results]
        print(f"  {key}: median {statistics.median(values):.1f}, max {max(values):.1f}")
    print(f"  hub API: {len(api_times)} requests, median {statistics.median(api_times) * 1000:.0f} ms, "
          f"max {max(api_times) * 1000:.0f} ms")
    if os.environ.get("OPRT_LOAD_REPORT"):
        Path(os.environ["OPRT_LOAD_REPORT"]).write_text(json.dumps(
            {"students": STUDENTS, "cells": CELLS, "wall_s": wall, "results": results,
             "api_max_s": max(api_times), "api_median_s": statistics.median(api_times)}, indent=1))
    assert max(api_times) < 5, f"the hub took {max(api_times):.1f} s to answer during the class's spawns"
