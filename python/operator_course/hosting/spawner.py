"""Each student's JupyterLab: a local process as their Unix user (JupyterHub's
LocalProcessSpawner) in a control group of their own, with limits set before it starts, and the
handout placed in their home on the first spawn.

The control group (grader/cgroups.py's, the grader's sandboxes use the same: cgroup v2 where this
hub may delegate memory, pids and cpu, else the v1 memory, pids and cpu hierarchies) counts all
the student's processes together: memory (memory_bytes, no swap: past it the kernel's OOM killer
ends the largest of them, usually a kernel, not the others' work), processes (pids) and CPU time
(cpus cores per wall second; under contention each student's group weighs the same). The server
joins it before exec, so kernels and terminals start inside; it is removed, with whatever is left
in it (a kernel orphaned by a killed server), when the server stops. Where no cgroup can be made
(not root, no writable hierarchy) the hub logs why and the per-process limits alone hold:
RLIMIT_NPROC, the student's processes and threads together (counted per uid), and RLIMIT_DATA,
the memory each process may allocate (not RLIMIT_AS: CUDA reserves terabytes of address space).

Nothing here blocks the hub's event loop (issue 30: spawn bursts held /hub/spawn up to 10.9 s):
the handout's copy, the notes, the runtime folder and the cgroup are made in worker threads.

Kernels talk to their server over IPC (Unix sockets), not TCP: a TCP port is picked by binding
port 0 and closing it, so two kernels started seconds apart could get the same one ("Address
already in use", issue 30). The sockets and connection files lie in the student's own runtime
folder, RUNTIME_ROOT/<name> (mode 0700, theirs; short, as a socket's path must be: 107 bytes)."""

from __future__ import annotations

import asyncio
import inspect
import os
import pwd
import resource
import shutil
import stat
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Bool, Float, Integer, Unicode

from operator_course.grader import cgroups
from . import accounts


class CourseSpawner(LocalProcessSpawner):
    memory_bytes = Integer(8 << 30, config=True,
                           help="memory of all the student's processes together (cgroup), and RLIMIT_DATA of each")
    processes = Integer(512, config=True, help="the student's processes and threads (cgroup pids, RLIMIT_NPROC)")
    cpus = Float(float(os.cpu_count() or 1), config=True,
                 help="CPU time per wall second of all the student's processes together, in cores (cgroup)")
    use_cgroups = Bool(True, config=True, help="a control group per student (else only per-process limits)")
    cgroup_parent = Unicode("oprt-course", config=True,
                            help="the students' groups' folder, under the hub's own cgroup in each hierarchy")
    handout = Unicode("", config=True, help="folder of released (student) notebooks")
    home_labs = Unicode("labs", config=True, help="the handout's folder in the student's home")
    site_note = Unicode("", config=True, help="text of COURSE.md in the student's home")
    runtime_root = Unicode("/run/oprt-course", config=True,
                           help="parent of each student's JUPYTER_RUNTIME_DIR (kernels' IPC sockets)")
    cgroup: cgroups.Group | None = None  # the student's group while their server runs

    @property
    def runtime_dir(self) -> str:
        return os.path.join(self.runtime_root, self.user.name)

    def get_args(self):
        return [*super().get_args(), "--KernelManager.transport=ipc"]

    def user_env(self, env):
        env = super().user_env(env)
        env["JUPYTER_RUNTIME_DIR"] = self.runtime_dir
        # where the student's submit and validate (operator_course.lab) find their labs and the handout
        if env.get("HOME"):  # LocalProcessSpawner's, from the student's passwd entry
            env["OPRT_LABS"] = os.path.join(env["HOME"], self.home_labs)
        if self.handout:
            env["OPRT_HANDOUT"] = self.handout
        return env

    def make_runtime_dir(self) -> None:
        """RUNTIME_ROOT (root's, 0755) and in it the student's folder (theirs, 0700)."""
        user = pwd.getpwnam(self.user.name)
        os.makedirs(self.runtime_root, mode=0o755, exist_ok=True)
        root = os.lstat(self.runtime_root)
        if root.st_uid != os.geteuid() or root.st_mode & 0o022 or not stat.S_ISDIR(root.st_mode):
            raise RuntimeError(f"{self.runtime_root} must be a folder only the hub's user writes")
        try:
            os.mkdir(self.runtime_dir, 0o700)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(self.runtime_dir).st_mode):
                raise RuntimeError(f"{self.runtime_dir} is not a folder") from None
        os.chown(self.runtime_dir, user.pw_uid, user.pw_gid)
        os.chmod(self.runtime_dir, 0o700)

    def make_cgroup(self) -> cgroups.Group | None:
        """The student's group (``cgroup_parent``/<name>; one left by an earlier server is taken
        over), or None where none can be made. Blocking: start() calls it in a worker thread."""
        if not self.use_cgroups:
            return None
        try:
            return cgroups.Group.create(self.user.name, cgroups.Budget(self.memory_bytes, self.processes, self.cpus),
                                        parent=self.cgroup_parent, reuse=True)
        except OSError as e:
            self.log.warning("No cgroup for %s (%s): only the per-process limits hold", self.user.name, e)
            return None

    async def remove_cgroup(self) -> None:
        """Kills what is left in the student's group and removes it (once the server has stopped)."""
        group, self.cgroup = self.cgroup, None
        if group is not None:
            await asyncio.to_thread(group.close)

    async def start(self):
        await asyncio.to_thread(self.make_runtime_dir)
        self.cgroup = await asyncio.to_thread(self.make_cgroup)
        try:
            return await super().start()
        except BaseException:
            await self.remove_cgroup()
            raise

    async def stop(self, now=False):
        await super().stop(now=now)
        if await self.poll() is not None:  # gone (a zombie that never died keeps its group)
            await self.remove_cgroup()

    async def run_post_stop_hook(self):
        # JupyterHub calls this after every stop, a server found dead by poll() (which does not call
        # stop) included; cleared state is saved after it
        await self.remove_cgroup()
        result = super().run_post_stop_hook()
        if inspect.isawaitable(result):
            await result

    def get_state(self):
        state = super().get_state()
        if self.cgroup is not None:  # a restarted hub removes the group when it finds the server stopped
            state["cgroup"] = {"folders": {k: str(v) for k, v in self.cgroup.folders.items()}, "v2": self.cgroup.v2}
        return state

    def load_state(self, state):
        super().load_state(state)
        saved = state.get("cgroup")
        if saved:
            self.cgroup = cgroups.Group({k: Path(v) for k, v in saved["folders"].items()}, bool(saved["v2"]))

    def make_preexec_fn(self, name):
        become = super().make_preexec_fn(name)
        data, nproc, group = self.memory_bytes, self.processes, self.cgroup

        def preexec():
            if group is not None:
                group.enter()  # the server and all it starts are the student's group's
            # set while still root: lowering is always allowed, and the limits are then the user's
            resource.setrlimit(resource.RLIMIT_DATA, (data, data))
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
            become()

        return preexec


async def place_handout(spawner: CourseSpawner) -> None:
    """pre_spawn_hook: copies the handout into ~/<home_labs>/ the first time (never over a
    student's work: cp -n, as the student), and writes ~/COURSE.md with the site's link and
    ~/SUBMIT.md on validate and submit. In a worker thread: the hub's event loop goes on serving
    everyone else meanwhile (JupyterHub awaits the hook)."""
    await asyncio.to_thread(_place_handout, spawner.user.name, spawner.handout, spawner.home_labs, spawner.site_note)


def _place_handout(name: str, handout: str, home_labs: str, site_note: str) -> None:
    if handout and Path(handout).is_dir():
        accounts.as_user(name, ["mkdir", "-p", home_labs], check=True)
        accounts.as_user(name, ["cp", "-rn", "--no-preserve=mode,ownership", f"{handout}/.", home_labs], check=True)
    if site_note:
        accounts.as_user(name, ["sh", "-c", 'cat > COURSE.md'], input=site_note, text=True, check=True)
    accounts.as_user(name, ["sh", "-c", 'cat > SUBMIT.md'], input=SUBMIT_NOTE.format(labs=home_labs), text=True,
                     check=True)


SUBMIT_NOTE = """# Validating and submitting a lab

Validate: runs your saved notebook's visible checks in a fresh kernel and says the points they
would earn (hidden checks, and the checks again on the grader's own inputs, are graded later):

    from operator_course import lab
    lab.validate("01_copy")          # in a notebook cell (lab.validate(): the notebook it is in)
    python -m operator_course.lab.validate 01_copy        # in a terminal (File > New > Terminal)

Submit: hands in the notebook as saved in ~/{labs}/ (save first: Ctrl+S), with the time:

    lab.submit("01_copy")            # in a notebook cell (lab.submit(): the notebook it is in)
    python -m operator_course.lab.submit 01_copy          # in a terminal
    python -m operator_course.lab.submit --list           # what you submitted, and when

Your latest submission of each lab is the one graded, and its time is the one the due date is
held against; submit again to replace it. A lab you never submit is graded as saved in ~/{labs}/
when the instructor collects, with the time it was saved.
"""


def gpus() -> int:
    """NVIDIA GPUs on this machine (nvidia-smi), 0 without."""
    import subprocess

    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    out = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout
    return sum(line.startswith("GPU ") for line in out.splitlines())
