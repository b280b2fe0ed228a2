"""The course's JupyterHub config, read by ``jupyterhub -f`` (``course serve`` starts it so):
everything comes from course.toml, named by $OPRT_COURSE_CONFIG.

PAM login for the roster's Unix users (only them: users the roster no longer names cannot log in,
and serve drops them from the hub's database); each student's JupyterLab runs as them with the
course venv's Python (its "python3" kernel imports the runtime and TileLang), in a cgroup of its
own (memory, processes, CPU), with the handout copied in on first spawn (spawner.py), its kernels
over IPC; a server that dies is noticed within poll_interval seconds. The students' servers outlive
the hub (a restarted hub takes them over); services: the idle culler,
the course site with the class leaderboard under it (/services/site/leaderboard/, public) and, where
course.toml names admins, the instructor's dashboard (/services/dashboard/, admins only; port
site_port + 1), which die with the hub (with_hub.py).
GPUs: students are spread over the GPUs (CUDA_VISIBLE_DEVICES), hub.students_per_gpu each;
the grader's performance checks take a timing lock per GPU (grader/gpus.py), so timings on one GPU
never overlap."""

import os
import shutil
import sys
from pathlib import Path

# JupyterHub executes this file outside any package (jupyterhub -f): absolute imports only
from operator_course.hosting import accounts, config
from operator_course.hosting.spawner import CourseSpawner, gpus, place_handout

c = get_config()  # noqa: F821 - defined by JupyterHub when it reads this file
course = config.load(Path(os.environ["OPRT_COURSE_CONFIG"]))
roster = accounts.students(course.roster)
venv_bin = str(Path(sys.executable).parent)

c.JupyterHub.bind_url = f"http://{course.ip}:{course.port}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{course.hub_port}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{course.proxy_api_port}"
# the proxy `make hub-deps` installed (package.json: node_modules/ of the course repository), else PATH's
proxies = [folder / "node_modules" / ".bin" / "configurable-http-proxy"
           for folder in (course.root, Path(__file__).resolve().parents[3])]
c.ConfigurableHTTPProxy.command = [next((str(p) for p in proxies if p.exists()), None)
                                   or shutil.which("configurable-http-proxy") or "configurable-http-proxy"]
c.ConfigurableHTTPProxy.pid_file = str(course.state / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{course.hub_db}"
c.JupyterHub.cookie_secret_file = str(course.state / "jupyterhub_cookie_secret")

c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False  # no login sessions (systemd-logind) needed for a server
c.Authenticator.allowed_users = set(roster)
c.Authenticator.admin_users = set(course.admins)
# only the roster (and admins) log in: not also every user the database still holds (JupyterHub's
# default with allowed_users), so a student taken off the roster is out at the next start; serve
# deletes such users from the database first (quietly), and any whose Unix account is gone too
c.Authenticator.allow_existing_users = False
c.Authenticator.delete_invalid_users = True

c.JupyterHub.spawner_class = CourseSpawner
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# a server that died (killed, out of memory) is noticed within seconds, not JupyterHub's 30: its
# student then gets "start my server" instead of the proxy's 503 (poll: a signal 0 or waitpid)
c.CourseSpawner.poll_interval = 5
# SIGTERM (or ^C) stops the hub, its proxy and services in seconds and leaves the students' servers
# running, their kernels' state too: the restarted hub takes them over (kill -9 of the hub does the same)
c.JupyterHub.cleanup_servers = False
c.CourseSpawner.memory_bytes = course.memory_gb << 30
c.CourseSpawner.processes = course.processes
c.CourseSpawner.cpus = course.cpus
c.CourseSpawner.handout = str(course.handout)
c.CourseSpawner.home_labs = course.home_labs
c.CourseSpawner.site_note = (
    "# The course\n\nThe course site: /services/site/ on this hub (e.g. http://HOST/services/site/index.html).\n"
    f"Your labs are in ~/{course.home_labs}/; save them there: the instructor collects them from it.\n"
    "Feedback on your graded labs appears in ~/feedback/.\n")
c.Spawner.pre_spawn_hook = place_handout

n_gpus = gpus()


def _gpu_of(spawner):
    name = spawner.user.name
    return str(roster.index(name) % n_gpus) if name in roster and n_gpus else ""


env = {"PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin"}
if n_gpus:
    env["CUDA_VISIBLE_DEVICES"] = _gpu_of  # students spread over the GPUs, students_per_gpu each
c.Spawner.environment = env

# the services die with the hub (SIGTERM when it exits, a crash too): a restarted hub starts them afresh
with_hub = [sys.executable, "-m", "operator_course.hosting.with_hub", str(os.getpid())]
services = [{"name": "idle-culler",
             "command": [*with_hub, sys.executable, "-m", "jupyterhub_idle_culler",
                         f"--timeout={course.idle_timeout}"]}]
roles = [{"name": "idle-culler", "services": ["idle-culler"],
          "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}]
# the site, and under it the class leaderboard the grader rebuilds after each run (pseudonyms only:
# GRADES/leaderboard/ is the one folder of the grades served to everyone), at /services/site/leaderboard/
services.append({"name": "site", "url": f"http://127.0.0.1:{course.site_port}",
                 "command": [*with_hub, sys.executable, "-m", "operator_course.hosting.site_server", str(course.site),
                             "--mount", f"leaderboard={course.grades / 'leaderboard'}"]})
if course.admins:  # the instructor's dashboard (names, errors, code): admins only, through the hub's OAuth
    services.append({"name": "dashboard", "url": f"http://127.0.0.1:{course.site_port + 1}", "oauth_no_confirm": True,
                     "command": [*with_hub, sys.executable, "-m", "operator_course.hosting.dashboard_server",
                                 str(course.grades), *course.admins]})
if os.environ.get("OPRT_HUB_ADMIN_TOKEN"):  # scripts (and the test) drive the hub's REST API with it
    services.append({"name": "course-admin", "api_token": os.environ["OPRT_HUB_ADMIN_TOKEN"]})
    roles.append({"name": "course-admin", "services": ["course-admin"],
                  "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"]})
c.JupyterHub.services = services
c.JupyterHub.load_roles = roles
