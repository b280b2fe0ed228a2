"""The course's one config file (course.toml), read into a ``Course``. Relative paths are taken
from the folder the file lives in."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path


@dataclass
class Course:
    root: Path                  # the folder of course.toml (the course repository)
    roster: Path                # one student per line: their Unix user names
    labs: Path                  # instructor notebooks (solutions): root-only while the hub runs
    state: Path                 # hub database, cookie secret, handout, passwords (root-only)
    site: Path                  # the built course site, served at /services/site/
    handout: Path               # the release (student copies) of labs: readable by students
    submissions: Path
    grades: Path
    home_labs: str = "labs"     # the handout's folder in each student's home
    admins: list[str] = field(default_factory=list)
    ip: str = "0.0.0.0"
    port: int = 8000
    hub_port: int = 8081
    proxy_api_port: int = 8001
    site_port: int = 8082
    idle_timeout: int = 3600
    memory_gb: int = 8          # per student: all their processes together (cgroup), and each one (RLIMIT_DATA)
    processes: int = 512        # per student: processes and threads (cgroup pids, RLIMIT_NPROC)
    cpus: float = field(default_factory=lambda: float(os.cpu_count() or 1))  # per student, cores (cgroup quota)
    students_per_gpu: int = 8
    due: dict[str, datetime] = field(default_factory=dict)
    late_rule: str = "flag"     # flag | deduct
    late_per_day: float = 0.1   # deduct: fraction of the lab's earned points per started day
    late_max: float = 1.0       # deduct: at most this fraction
    cpu_verdicts: str = "count"  # count | pending: CPU-judged kernels before a GPU pass

    @property
    def passwords(self) -> Path:
        return self.state / "passwords.txt"

    @property
    def hub_db(self) -> Path:
        return self.state / "jupyterhub.sqlite"


def load(path: Path) -> Course:
    path = path.resolve()
    data = tomllib.loads(path.read_text())
    course, hub, late = data.get("course", {}), data.get("hub", {}), data.get("late", {})
    root = path.parent

    def where(value: str) -> Path:
        return (root / value).resolve()

    due = {}
    for lab, entry in data.get("labs", {}).items():
        when = entry.get("due") if isinstance(entry, dict) else None
        if when is not None:
            when = when if isinstance(when, datetime) else datetime.fromisoformat(str(when))
            if when.tzinfo is None:
                raise ValueError(f"{path}: labs.{lab}.due {when} has no time zone (write e.g. +00:00)")
            due[lab] = when
    cpu_verdicts = data.get("grading", {}).get("cpu_verdicts", "count")
    if cpu_verdicts not in ("count", "pending"):
        raise ValueError(f"{path}: grading.cpu_verdicts must be 'count' or 'pending', not {cpu_verdicts!r}")
    rule = late.get("rule", "flag")
    if rule not in ("flag", "deduct"):
        raise ValueError(f"{path}: late.rule must be 'flag' or 'deduct', not {rule!r}")
    return Course(
        root=root, roster=where(course.get("roster", "roster.txt")), labs=where(course.get("labs", "labs")),
        state=where(course.get("state", "_build/course")), site=where(course.get("site", "_build/html")),
        handout=where(course.get("handout", "_build/handout")),
        submissions=where(course.get("submissions", "submissions")), grades=where(course.get("grades", "grades")),
        home_labs=course.get("home_labs", "labs"), admins=list(course.get("admins", [])),
        ip=hub.get("ip", "0.0.0.0"), port=int(hub.get("port", 8000)), hub_port=int(hub.get("hub_port", 8081)),
        proxy_api_port=int(hub.get("proxy_api_port", 8001)),
        site_port=int(hub.get("site_port", 8082)), idle_timeout=int(hub.get("idle_timeout", 3600)),
        memory_gb=int(hub.get("memory_gb", 8)), processes=int(hub.get("processes", 512)),
        cpus=float(hub.get("cpus", os.cpu_count() or 1)),
        students_per_gpu=int(hub.get("students_per_gpu", 8)), due=due, late_rule=rule,
        late_per_day=float(late.get("per_day", 0.1)), late_max=float(late.get("max", 1.0)), cpu_verdicts=cpu_verdicts)
