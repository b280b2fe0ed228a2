"""The hub's start-up and process plumbing, without starting a hub (issue 30): `serve` with a
relative --config (as `make hub` passes it), its refusal of a Python students cannot run, the
students' kernels over IPC in their own runtime folder, and services that die with the hub."""

from __future__ import annotations

import asyncio
import os
import runpy
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("jupyterhub", reason="the course hub (requirements.txt)")

from operator_course.hosting import __main__ as course_cli  # noqa: E402
from operator_course.hosting import config, serve  # noqa: E402
from operator_course.hosting.spawner import CourseSpawner  # noqa: E402

HUB_CONFIG = Path(serve.__file__).with_name("hub_config.py")


@pytest.fixture
def open_tmp():
    """A temporary folder other users may enter (pytest's own tmp_path lies under a 0700 folder)."""
    path = Path(tempfile.mkdtemp(prefix="oprt-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def write_course(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "roster.txt").write_text("student\nalice\n")
    toml = folder / "course.toml"
    toml.write_text('[course]\nroster = "roster.txt"\nstate = "state"\n')
    return toml


class Exec(Exception):
    pass


def test_serve_takes_a_relative_config_from_the_callers_folder(tmp_path, monkeypatch):
    """`make hub` runs `serve --config course.toml`; serve chdirs into the hub state before
    exec'ing JupyterHub, whose config then reads $OPRT_COURSE_CONFIG from there."""
    toml = write_course(tmp_path / "course")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.setenv("OPRT_COURSE_CONFIG", "unset")
    monkeypatch.setattr(serve, "prepare", lambda course: course.state.mkdir(parents=True))

    def execv(path, argv):
        raise Exec(argv)

    monkeypatch.setattr(os, "execv", execv)
    with pytest.raises(Exec) as exec_:
        course_cli.main(["serve", "--config", "../course/course.toml"])
    assert exec_.value.args[0][1:4] == ["-m", "jupyterhub", "-f"]
    assert Path.cwd() == tmp_path / "course" / "state"
    assert os.environ["OPRT_COURSE_CONFIG"] == str(toml)
    course = config.load(Path(os.environ["OPRT_COURSE_CONFIG"]))  # as hub_config.py does, from the state folder
    assert course.roster == tmp_path / "course" / "roster.txt"  # course.toml's paths: from its own folder


def test_closed_folder_finds_the_folder_other_users_cannot_enter(open_tmp):
    for name, mode in (("open", 0o755), ("closed", 0o700)):
        (open_tmp / name / "bin").mkdir(parents=True)
        (open_tmp / name / "bin" / "python").touch(0o755)
        (open_tmp / name).chmod(mode)
    assert serve.closed_folder(open_tmp / "open" / "bin" / "python") is None
    assert serve.closed_folder(open_tmp / "closed" / "bin" / "python") == open_tmp / "closed"
    (open_tmp / "open" / "bin" / "python").chmod(0o750)  # a file others may not run
    assert serve.closed_folder(open_tmp / "open" / "bin" / "python") == open_tmp / "open" / "bin" / "python"


def test_serve_refuses_a_python_students_cannot_run_before_changing_anything(open_tmp, tmp_path, monkeypatch):
    """A venv made from a pyenv Python under /root (0700): the students' servers could not start."""
    root = open_tmp / "root"
    (root / "pyenv" / "bin").mkdir(parents=True)
    python = root / "pyenv" / "bin" / "python3"
    python.touch(0o755)
    root.chmod(0o700)
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setattr(os, "geteuid", lambda: 0)

    def went_on(*args):  # what prepare does next (reads the roster, then makes users): never here
        raise AssertionError("serve went on past a Python students cannot run")

    monkeypatch.setattr(serve.accounts, "students", went_on)
    course = config.load(write_course(tmp_path / "course"))
    with pytest.raises(SystemExit) as refused:
        serve.prepare(course)
    message = str(refused.value)
    assert str(python) in message and f"{root} (mode 700) is closed to other users" in message
    assert "Hosting the course" in message
    assert not course.state.exists()  # refused before making accounts, folders or the handout


def test_student_servers_start_kernels_over_ipc_in_their_own_runtime_folder(open_tmp):
    me = os.environ.get("USER") or __import__("pwd").getpwuid(os.getuid()).pw_name
    spawner = CourseSpawner(user=SimpleNamespace(name=me), runtime_root=str(open_tmp / "run"))
    assert "--KernelManager.transport=ipc" in spawner.get_args()
    assert spawner.user_env({})["JUPYTER_RUNTIME_DIR"] == str(open_tmp / "run" / me)
    spawner.make_runtime_dir()
    spawner.make_runtime_dir()  # again, as on the next spawn
    made = os.stat(open_tmp / "run" / me)
    assert stat.S_IMODE(made.st_mode) == 0o700 and made.st_uid == os.getuid()
    assert stat.S_IMODE(os.stat(open_tmp / "run").st_mode) == 0o755


def test_two_kernels_started_together_get_their_own_sockets(open_tmp):
    """The single-user server's arguments, parsed as the server parses them, give kernels that
    bind Unix sockets named after the kernel: nothing for two kernels to collide on."""
    from jupyter_client.multikernelmanager import AsyncMultiKernelManager
    from jupyter_server.serverapp import ServerApp

    app = ServerApp()
    app.parse_command_line(CourseSpawner(user=SimpleNamespace(name="alice")).get_args())
    kernels = AsyncMultiKernelManager(config=app.config, connection_dir=str(open_tmp),
                                      kernel_manager_class="jupyter_server.services.kernels.kernelmanager."
                                                           "ServerKernelManager")

    async def two_kernels():
        ids = await asyncio.gather(kernels.start_kernel(), kernels.start_kernel())
        try:
            for kernel_id in ids:
                manager = kernels.get_kernel(kernel_id)
                assert manager.transport == "ipc"
                assert manager.ip.startswith(str(open_tmp / f"kernel-{kernel_id}"))
                client = manager.client()
                client.start_channels()
                reply = await client.kernel_info(reply=True, timeout=60)
                client.stop_channels()
                assert reply["content"]["status"] == "ok"
            return ids
        finally:
            await kernels.shutdown_all(now=True)

    ids = asyncio.run(two_kernels())
    assert len(set(ids)) == 2


def test_hub_config_starts_its_services_so_they_die_with_the_hub(tmp_path, monkeypatch):
    monkeypatch.setenv("OPRT_COURSE_CONFIG", str(write_course(tmp_path / "course")))
    from traitlets.config import Config

    c = Config()
    runpy.run_path(str(HUB_CONFIG), init_globals={"get_config": lambda: c})
    assert c.JupyterHub.spawner_class is CourseSpawner
    commands = [s["command"] for s in c.JupyterHub.services if "command" in s]
    assert commands and all(cmd[1:4] == ["-m", "operator_course.hosting.with_hub", str(os.getpid())]
                            for cmd in commands), commands


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"  # a zombie is dead
    except FileNotFoundError:
        return True


def test_with_hub_ends_its_command_when_the_hub_dies():
    """A stand-in hub starts `sleep` through with_hub and is killed (-9, as in a crash)."""
    hub = subprocess.Popen([sys.executable, "-c", """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-m", "operator_course.hosting.with_hub", str(os.getpid()), "sleep", "300"])
print(child.pid, flush=True)
time.sleep(300)
"""], stdout=subprocess.PIPE, text=True)
    child = int(hub.stdout.readline())
    try:
        deadline = time.time() + 30
        while b"sleep" not in Path(f"/proc/{child}/cmdline").read_bytes():  # with_hub has exec'd it
            assert time.time() < deadline, "with_hub did not start its command"
            time.sleep(0.05)
        hub.kill()
        hub.wait()
        deadline = time.time() + 5
        while not _gone(child):
            assert time.time() < deadline, "the service outlived the hub"
            time.sleep(0.05)
    finally:
        hub.kill()
        if not _gone(child):
            os.kill(child, signal.SIGKILL)


def test_with_hub_does_not_start_its_command_when_the_hub_is_already_gone(tmp_path):
    marker = tmp_path / "ran"
    done = subprocess.run([sys.executable, "-m", "operator_course.hosting.with_hub", "1", "touch", str(marker)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "is gone" in done.stderr and not marker.exists()


def test_the_checkouts_git_history_is_private_like_the_solutions(tmp_path):
    """labs/ (solutions, the grader's own shapes) is closed to students while the hub runs; the checkout's
    .git holds every version of it (`git show HEAD:labs/...`), so it is closed too, where there is one."""
    course = config.load(write_course(tmp_path / "course"))
    assert course.labs in serve.private(course) and course.root / ".git" not in serve.private(course)
    (course.root / ".git").mkdir()
    assert course.root / ".git" in serve.private(course)
