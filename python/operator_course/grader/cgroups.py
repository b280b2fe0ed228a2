"""Limits per submission, not per process: a control group per sandbox run, and a work dir on a
size- and inode-limited tmpfs.

RLIMIT_DATA and RLIMIT_NPROC bound one process (or one uid); a submission that forks three
children of 3 GiB each held 10.5 GB under a 6 GiB limit, and 200,000 empty files in its HOME
landed on the host's disk. A cgroup counts every process of the sandbox together (memory,
tmpfs pages it wrote included; processes; CPU time), and the work dir's tmpfs caps bytes and
inodes whatever the sandbox writes there.

cgroup v2 is used where this process may create children with the memory, pids and cpu
controllers enabled (a delegated subtree); else the v1 ``memory``, ``pids`` and ``cpu``
hierarchies when they are mounted writable (the course's CPU machine mounts them so: a 256 MB v1
memory group OOM-killed a 400 MB allocation there). ``available()`` says, in words, why neither
works; the grader then refuses to run unless told ``--per-process-limits``.

    group = Group.create("job-1", Budget(memory_bytes=6 << 30, processes=256, cpus=2))
    subprocess.Popen(cmd, preexec_fn=group.enter)   # the child and all it starts are inside
    ...
    group.close()                                   # kills what is left, records the peak, removes it
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
V1 = ("memory", "pids", "cpu")
PARENT = f"oprt-grade-{os.getpid()}"  # this grader's groups, under the cgroup it runs in
_names = itertools.count()


@dataclass(frozen=True)
class Budget:
    memory_bytes: int
    processes: int
    cpus: float  # CPU time per wall second, in cores


def _own(controller: str | None) -> str:
    """This process's cgroup path in ``controller``'s v1 hierarchy (None: the v2 one)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if (controller is None and names == "") or (controller and controller in names.split(",")):
            return path.lstrip("/")
    raise OSError(f"no {controller or 'v2'} cgroup for this process")


def _v2_base() -> Path | None:
    """The v2 folder our groups go in, when memory, pids and cpu can be delegated to them."""
    mount = ROOT if (ROOT / "cgroup.controllers").exists() else ROOT / "unified"
    try:
        base = mount / _own(None)
        wanted = {"memory", "pids", "cpu"}
        return base if wanted <= set((base / "cgroup.controllers").read_text().split()) else None
    except OSError:
        return None


def _v1_bases() -> dict[str, Path] | None:
    bases = {}
    for c in V1:
        folder = ROOT / c
        try:
            own = folder / _own(c)
        except OSError:
            return None
        base = own if own.is_dir() else folder  # a container may show its group at the top
        if not os.access(base, os.W_OK):
            return None
        bases[c] = base
    return bases


def available() -> str | None:
    """None when this process can make per-sandbox groups, else why not."""
    if os.geteuid() != 0 and _v2_base() is None:
        return "not root and no delegated cgroup v2 subtree with memory, pids and cpu"
    if _v2_base() is None and _v1_bases() is None:
        return ("neither a cgroup v2 subtree with the memory, pids and cpu controllers nor writable v1 "
                "memory, pids and cpu hierarchies are mounted")
    try:
        Group.create("probe", Budget(64 << 20, 8, 1)).close()
    except OSError as e:
        return f"a cgroup could not be made here: {e}"
    finally:  # the probe's parent too, unless this process's runs are using it (then it is not empty)
        remove_parents()
    return None


class Group:
    """One sandbox run's control groups (one folder per v1 hierarchy, or one v2 folder)."""

    def __init__(self, folders: dict[str, Path], v2: bool):
        self.folders, self.v2 = folders, v2
        self.peak_bytes: int | None = None
        self.oom_killed = False

    @classmethod
    def create(cls, label: str, budget: Budget, *, parent: str = PARENT, reuse: bool = False) -> "Group":
        """A new group ``label-N`` under ``parent``; with ``reuse``, the group named ``label`` itself,
        taken over (its limits rewritten) if it is there already (the course hub's group per
        student, which outlives a hub restart)."""
        name = label if reuse else f"{label}-{next(_names)}"
        v2 = _v2_base()
        if v2 is not None:
            top = v2 / parent
            top.mkdir(exist_ok=True)
            (top / "cgroup.subtree_control").write_text("+memory +pids +cpu")
            folder = top / name
            folder.mkdir(exist_ok=reuse)
            group = cls({"v2": folder}, True)
            group._write("v2", "memory.max", budget.memory_bytes)
            group._write("v2", "memory.swap.max", 0, optional=True)
            group._write("v2", "pids.max", budget.processes)
            group._write("v2", "cpu.max", f"{int(budget.cpus * 100_000)} 100000")
            return group
        bases = _v1_bases()
        if bases is None:
            raise OSError("no writable cgroup hierarchies (cgroups.available() says why)")
        folders = {}
        for c, base in bases.items():
            folders[c] = base / parent / name
            folders[c].mkdir(parents=True, exist_ok=reuse)
        group = cls(folders, False)
        if reuse:  # the swap limit may not fall below the memory limit: lift it while that changes
            group._write("memory", "memory.memsw.limit_in_bytes", -1, optional=True)
        group._write("memory", "memory.limit_in_bytes", budget.memory_bytes)
        group._write("memory", "memory.memsw.limit_in_bytes", budget.memory_bytes, optional=True)  # no swap either
        group._write("pids", "pids.max", budget.processes)
        group._write("cpu", "cpu.cfs_period_us", 100_000)
        group._write("cpu", "cpu.cfs_quota_us", int(budget.cpus * 100_000))
        return group

    def _write(self, key: str, file: str, value, optional: bool = False) -> None:
        try:
            (self.folders[key] / file).write_text(str(value))
        except OSError:
            if not optional:
                raise

    def enter(self) -> None:
        """In the child, before exec (``preexec_fn``): the process and all it starts join the group."""
        for folder in self.folders.values():
            (folder / "cgroup.procs").write_text("0")  # 0: the writing process

    def pids(self) -> set[int]:
        found = set()
        for folder in self.folders.values():
            try:
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            except OSError:
                pass
        return found

    def close(self) -> None:
        """Kills whatever is still inside (a daemon that left bwrap's session), records the memory
        peak and whether the OOM killer struck, and removes the groups."""
        for _ in range(100):
            left = self.pids()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)
        self.peak_bytes, self.oom_killed = self._memory_stats()
        for folder in self.folders.values():
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # still emptying
                    time.sleep(0.02)

    def _memory_stats(self) -> tuple[int | None, bool]:
        try:
            if self.v2:
                events = (self.folders["v2"] / "memory.events").read_text()
                oom = any(line.split()[0] == "oom_kill" and int(line.split()[1]) > 0 for line in events.splitlines())
                peak_file = self.folders["v2"] / "memory.peak"
                return (int(peak_file.read_text()) if peak_file.exists() else None), oom
            folder = self.folders["memory"]
            control = dict(line.split() for line in (folder / "memory.oom_control").read_text().splitlines())
            return int((folder / "memory.max_usage_in_bytes").read_text()), int(control.get("oom_kill", 0)) > 0
        except (OSError, ValueError, IndexError):
            return None, False


def bases() -> list[Path]:
    """The folders groups are made in: the v2 one, else one per v1 hierarchy (none: no cgroups)."""
    return [_v2_base()] if _v2_base() is not None else list((_v1_bases() or {}).values())


def remove_parents() -> None:
    """This grader's parent groups, once every run has closed its own (at the grader's exit)."""
    for base in bases():
        try:
            (base / PARENT).rmdir()
        except OSError:
            pass


@dataclass(frozen=True)
class Disk:
    bytes: int
    inodes: int


def mount_workdir(folder: Path, disk: Disk) -> None:
    """``folder`` becomes a tmpfs of at most ``disk.bytes`` and ``disk.inodes`` files (root only)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={disk.bytes},nr_inodes={disk.inodes},mode=0700,nosuid,nodev",
                    "oprt-grade-work", str(folder)], check=True, capture_output=True, text=True, timeout=30)


def unmount_workdir(folder: Path) -> None:
    """Drops the tmpfs and all in it (lazily, should a process of the sandbox still hold a file)."""
    subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)


def workdir_available() -> str | None:
    """None when limited tmpfs work dirs can be mounted here, else why not."""
    if os.geteuid() != 0:
        return "not root: a size- and inode-limited tmpfs work dir needs mount"
    import tempfile

    probe = Path(tempfile.mkdtemp(prefix="oprt-probe-"))
    try:
        mount_workdir(probe, Disk(1 << 20, 16))
        unmount_workdir(probe)
    except (OSError, subprocess.SubprocessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        return f"a tmpfs could not be mounted here: {str(detail).strip()[-200:]}"
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass
    return None
