"""Each student's JupyterLab: a local process as their Unix user (JupyterHub's
LocalProcessSpawner) with limits set before it starts, and the handout placed in their home on
the first spawn.

Limits (kernels and terminals inherit them): RLIMIT_NPROC, the student's processes and
threads together (counted per uid), and RLIMIT_DATA, the memory each process may allocate (not
RLIMIT_AS: CUDA reserves terabytes of address space). A cap on the sum over a student's
processes needs cgroups (systemd's SystemdSpawner, or Kubernetes: python/operator_course/hosting/kubernetes/README.md).

Kernels talk to their server over IPC (Unix sockets), not TCP: a TCP port is picked by binding
port 0 and closing it, so two kernels started seconds apart could get the same one ("Address
already in use", issue 30). The sockets and connection files lie in the student's own runtime
folder, RUNTIME_ROOT/<name> (mode 0700, theirs; short, as a socket's path must be: 107 bytes)."""

from __future__ import annotations

import os
import pwd
import resource
import shutil
import stat
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Integer, Unicode

from .accounts import as_user


class CourseSpawner(LocalProcessSpawner):
    memory_bytes = Integer(8 << 30, config=True, help="RLIMIT_DATA of each of the student's processes")
    processes = Integer(512, config=True, help="RLIMIT_NPROC: the student's processes and threads")
    handout = Unicode("", config=True, help="folder of released (student) notebooks")
    home_labs = Unicode("labs", config=True, help="the handout's folder in the student's home")
    site_note = Unicode("", config=True, help="text of COURSE.md in the student's home")
    runtime_root = Unicode("/run/oprt-course", config=True,
                           help="parent of each student's JUPYTER_RUNTIME_DIR (kernels' IPC sockets)")

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

    async def start(self):
        self.make_runtime_dir()
        return await super().start()

    def make_preexec_fn(self, name):
        become = super().make_preexec_fn(name)
        data, nproc = self.memory_bytes, self.processes

        def preexec():
            # set while still root: lowering is always allowed, and the limits are then the user's
            resource.setrlimit(resource.RLIMIT_DATA, (data, data))
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
            become()

        return preexec


def place_handout(spawner: CourseSpawner) -> None:
    """pre_spawn_hook: copies the handout into ~/<home_labs>/ the first time (never over a
    student's work: cp -n, as the student), and writes ~/COURSE.md with the site's link and
    ~/SUBMIT.md on validate and submit."""
    name = spawner.user.name
    if spawner.handout and Path(spawner.handout).is_dir():
        as_user(name, ["mkdir", "-p", spawner.home_labs], check=True)
        as_user(name, ["cp", "-rn", "--no-preserve=mode,ownership", f"{spawner.handout}/.", spawner.home_labs],
                check=True)
    if spawner.site_note:
        as_user(name, ["sh", "-c", 'cat > COURSE.md'], input=spawner.site_note, text=True, check=True)
    as_user(name, ["sh", "-c", 'cat > SUBMIT.md'], input=SUBMIT_NOTE.format(labs=spawner.home_labs), text=True,
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
