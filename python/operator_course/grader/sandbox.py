"""Run a command on untrusted input inside a bubblewrap sandbox.

What the sandboxed command sees and may do:
  - an unprivileged uid (when the grader is root: a uid of its own per concurrent job, so the
    process limit is per submission; otherwise the grader's uid inside a user namespace),
  - its own PID, IPC, UTS and network namespaces (loopback only: Jupyter's kernel talks over it),
  - a read-only view of the system (/usr, /etc, ...) and of the course environment (Python, the
    venv, the operator_runtime and operator_course packages, CUDA), with the protected folders (instructor labs,
    submissions, the grader's output) masked by empty tmpfs even where they lie inside those,
  - a private /tmp and exactly one writable folder, its work dir (mounted at /home/student, its HOME),
  - limits for the whole run (cgroups.py): memory of all its processes together (tmpfs pages it
    wrote included), processes and threads, CPU cores; and per process: memory (RLIMIT_DATA: CUDA
    reserves terabytes of address space, so not RLIMIT_AS), CPU seconds, processes (RLIMIT_NPROC,
    per uid), file size, no core dumps,
  - no capabilities, no new privileges; everything in it is killed when its first process
    exits (PID namespace), when the grader dies (--die-with-parent) or at the wall-clock limit.

The grader refuses to run without bubblewrap unless told ``--unsafe-no-sandbox``
(``available()`` says why it cannot run).
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

WORK = "/home/student"  # where the work dir appears inside the sandbox (its HOME)


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 6 << 30
    cpu_seconds: int = 3600
    processes: int = 256  # threads count too: torch, TVM and the Jupyter kernel start dozens
    file_bytes: int = 64 << 20  # any one file written, stdout included (it goes to a file)
    tmp_bytes: int = 2 << 30
    cpus: float = 2.0  # cores the whole run may keep busy (cgroup only)
    cgroup: bool = True  # False: per-process limits only (--per-process-limits)


@dataclass
class Outcome:
    returncode: int | None
    timed_out: bool
    seconds: float = 0.0
    peak_bytes: int | None = None  # the run's memory peak, all processes together (cgroup only)
    oom_killed: bool = False


def bwrap() -> str | None:
    return shutil.which("bwrap")


def available(uid: int | None) -> str | None:
    """None when sandboxes for ``uid`` can run here, else the reason in words."""
    exe = bwrap()
    if exe is None:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    probe = Sandbox(uid=uid, gpu=False, readable=[], protected=[], limits=Limits(cgroup=False))
    try:
        result = subprocess.run(probe.command(["/bin/true"], Path("/")), capture_output=True, text=True,
                                timeout=30, preexec_fn=probe._limit)
    except (OSError, subprocess.SubprocessError) as e:
        return f"bwrap could not start: {e}"
    if result.returncode:
        return f"bwrap could not start a sandbox here: {result.stderr.strip()[-300:]}"
    return None


def _system_binds() -> list[str]:
    """Read-only system folders; usr-merged links (/bin -> usr/bin) stay links."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc", "--ro-bind-try", "/opt", "/opt",
            "--ro-bind-try", "/sys", "/sys"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@dataclass
class Sandbox:
    uid: int | None  # None: keep the caller's uid (no root)
    gpu: bool | str  # False: no GPU; True: those the grader sees; "1": that one only (gpus.py)
    readable: list[Path]  # mounted read-only at the same paths
    protected: list[Path]  # never visible, even inside a readable folder
    limits: Limits = field(default_factory=Limits)
    env: dict[str, str] = field(default_factory=dict)  # set inside beside sandbox_env's fixed ones

    def command(self, argv: list[str], workdir: Path) -> list[str]:
        cmd = [bwrap(), "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
               "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "sandbox",
               *_system_binds(), "--proc", "/proc"]
        cmd += ["--dev-bind", "/dev", "/dev"] if self.gpu else ["--dev", "/dev"]  # GPUs are device files
        # /tmp first: course paths inside it (the GPU machine's unpacked packages) are bound over it
        cmd += ["--perms", "1777", "--size", str(self.limits.tmp_bytes), "--tmpfs", "/tmp"]
        made = set()
        for path in _unique(self.readable):
            for parent in reversed(path.parents[:-1]):  # bwrap would make missing parents 0700
                if parent not in made and not any(_inside(parent, Path(t)) for t in ("/usr", "/etc", "/opt", "/sys")) \
                        and parent != Path("/tmp"):
                    made.add(parent)
                    cmd += ["--perms", "0755", "--dir", str(parent)]
            cmd += ["--ro-bind-try", str(path), str(path)]
        bound = [Path(p) for p in ("/usr", "/etc", "/opt", "/sys")] + list(self.readable)
        for secret in _unique(self.protected):
            if any(_inside(secret, b) for b in bound):  # e.g. labs/ inside a readable checkout
                cmd += ["--tmpfs", str(secret)]
        cmd += ["--perms", "0755", "--dir", str(Path(WORK).parent), "--bind", str(workdir), WORK, "--chdir", WORK]
        if self.uid is not None and os.geteuid() == 0:
            # bwrap runs privileged (no user namespace needed, so AppArmor's limits on those do not
            # matter), keeps only the two capabilities setpriv needs to become the sandbox user,
            # and setpriv drops them for good before the command starts.
            cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
                    "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                    "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
        else:
            cmd += ["--unshare-user", "--"]
        return cmd + list(argv)

    def _limit(self) -> None:  # in the child, before exec: inherited by everything it starts
        lim = self.limits
        for which, value in ((resource.RLIMIT_DATA, lim.memory_bytes), (resource.RLIMIT_CPU, lim.cpu_seconds),
                             (resource.RLIMIT_NPROC, lim.processes), (resource.RLIMIT_FSIZE, lim.file_bytes),
                             (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(which, (value, value))

    def prepare(self, workdir: Path) -> None:
        """The work dir belongs to the sandbox user (and no one else may enter it)."""
        workdir.mkdir(parents=True, exist_ok=True)
        if self.uid is not None and os.geteuid() == 0:
            for root, dirs, files in os.walk(workdir):
                for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                    os.lchown(name, self.uid, self.uid)
        os.chmod(workdir, 0o700)

    def run(self, argv: list[str], workdir: Path, timeout: float, log: Path) -> Outcome:
        """Runs ``argv`` with ``workdir`` as its HOME and cwd; stdout and stderr go to ``log``
        (a file outside the sandbox, capped by the file-size limit)."""
        self.prepare(workdir)
        if not self.limits.cgroup:
            return _run(self.command(argv, workdir), sandbox_env(self.gpu, self.env), None, self._limit, timeout, log)
        from .cgroups import Budget, Group

        lim = self.limits
        group = Group.create(f"uid{self.uid}", Budget(lim.memory_bytes, lim.processes, lim.cpus))
        try:
            outcome = _run(self.command(argv, workdir), sandbox_env(self.gpu, self.env), None,
                           lambda: (group.enter(), self._limit()), timeout, log)
        finally:
            group.close()  # a process that left bwrap's session dies here
        outcome.peak_bytes, outcome.oom_killed = group.peak_bytes, group.oom_killed
        return outcome


@dataclass
class Unsandboxed:
    """``--unsafe-no-sandbox``: the same commands as the grader's user, in the work dir. Only for
    trusted submissions (an instructor's own tests); the grader says so when it is used."""
    gpu: bool | str
    env: dict[str, str] = field(default_factory=dict)

    def run(self, argv: list[str], workdir: Path, timeout: float, log: Path) -> Outcome:
        workdir.mkdir(parents=True, exist_ok=True)
        env = sandbox_env(self.gpu, {**self.env, "HOME": str(workdir)})
        return _run(argv, env, workdir, None, timeout, log)


def _run(cmd, env, cwd, preexec, timeout: float, log: Path) -> Outcome:
    import time

    start = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                cwd=cwd, preexec_fn=preexec, start_new_session=True)
        timer = threading.Timer(timeout, _kill, (proc,))
        timer.start()
        try:
            code = proc.wait()
        finally:
            timer.cancel()
            _kill(proc)  # whatever the command left behind in its session
    elapsed = time.monotonic() - start
    _trim(log)
    return Outcome(code, code == -signal.SIGKILL and elapsed >= timeout, elapsed)


LOG_KEEP = 1 << 20  # bytes kept of each end of a log: a class's logs must not fill the grader's disk


def _trim(log: Path) -> None:
    size = log.stat().st_size
    if size > 2 * LOG_KEEP:
        with open(log, "r+b") as f:
            head = f.read(LOG_KEEP)
            f.seek(size - LOG_KEEP)
            tail = f.read()
            f.seek(0)
            f.write(head + f"\n[... {size - 2 * LOG_KEEP} bytes cut ...]\n".encode() + tail)
            f.truncate()


def _kill(proc: subprocess.Popen) -> None:
    try:  # the whole session: bwrap, and through its PID namespace everything inside
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _unique(paths) -> list[Path]:
    seen, out = set(), []
    for p in paths:
        p = Path(p)
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def course_paths() -> list[Path]:
    """What a sandboxed course process needs to read: the interpreter, the venv, the packages
    (``operator_runtime`` may be an editable install pointing into a checkout), CUDA."""
    import operator_course
    import operator_runtime_testing

    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(sys.executable).resolve().parent.parent,
             *(Path(package.__file__).resolve().parents[1] for package in (operator_course, operator_runtime_testing))}
    for entry in sys.path:  # site-packages, and PYTHONPATH entries (the GPU machine's packs)
        if entry and os.path.isabs(entry) and os.path.isdir(entry) and entry != os.getcwd():
            paths.add(Path(entry).resolve())
    if os.environ.get("CAMP_BUILD_DIR"):
        paths.add(Path(os.environ["CAMP_BUILD_DIR"]).resolve())
    nvcc = shutil.which("nvcc")
    if nvcc:
        paths.add(Path(nvcc).resolve().parents[1])
    return sorted(paths)


def sandbox_env(gpu: bool | str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A small, fixed environment: nothing of the grader's leaks in."""
    path = [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        path.insert(1, str(Path(nvcc).parent))
    env = {"PATH": ":".join(path), "HOME": WORK, "USER": "student", "LOGNAME": "student", "LANG": "C.UTF-8",
           "TMPDIR": "/tmp", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
           "OMP_NUM_THREADS": "2", "TVM_NUM_THREADS": "2", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
           "JUPYTER_PLATFORM_DIRS": "1"}
    for key in ("PYTHONPATH", "CAMP_BUILD_DIR", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_VISIBLE_DEVICES"):
        if os.environ.get(key):
            env[key] = os.environ[key]
    if not gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    elif isinstance(gpu, str):  # one GPU of the host: the job's CUDA sees it alone, as device 0
        env["CUDA_VISIBLE_DEVICES"] = gpu
    env.update(extra or {})
    return env
