"""How the hub serves the class view (issue 30), without starting a hub: the site service serves
the public leaderboard (GRADES/leaderboard/) under /services/site/leaderboard/ and nothing else of
the grades; the instructor's dashboard is a service of its own that hands GRADES only to the
course's admins (the hub's OAuth scope, then course.toml's admins), and hub_config.py starts it
only where course.toml names admins."""

from __future__ import annotations

import asyncio
import functools
import http.client
import runpy
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("jupyterhub", reason="the course hub (requirements.txt)")

from operator_course.hosting import serve, site_server  # noqa: E402

HUB_CONFIG = Path(serve.__file__).with_name("hub_config.py")


@pytest.fixture
def grades(tmp_path) -> Path:
    """A grades folder as the grader leaves it, and a built site."""
    out = tmp_path / "grades"
    for path, text in {"gradebook.csv": "student,lab\nalice,01_copy\n", "feedback/alice.md": "# Feedback for alice",
                       "leaderboard/index.html": "<h1>Class leaderboard</h1> brave-otter-01",
                       "leaderboard/01_copy-roofline.png": "png", "dashboard/index.html": "<h1>dashboard</h1> alice",
                       ".pseudonym-key": "secret", "logs/alice/01_copy/notebook.log": "alice's run"}.items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(text)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("the course site")
    return out


def get(port: int, path: str, headers: dict | None = None) -> tuple[int, str, dict]:
    """A raw GET (the path as given: no client-side normalising of '..')."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    body = response.read().decode(errors="replace")
    conn.close()
    return response.status, body, dict(response.getheaders())


def test_the_site_serves_the_leaderboard_and_no_other_part_of_the_grades(grades):
    args = site_server.parse_args([str(grades.parent / "site"), "--mount", f"leaderboard={grades / 'leaderboard'}"])

    class Handler(site_server.Handler):
        prefix, mounts = "/services/site/", args.mounts

        def log_message(self, *a):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=args.folder))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    try:
        assert get(port, "/services/site/index.html")[:2] == (200, "the course site")
        status, body, _ = get(port, "/services/site/leaderboard/index.html")
        assert status == 200 and "brave-otter-01" in body
        assert get(port, "/services/site/leaderboard/01_copy-roofline.png")[0] == 200
        status, _, headers = get(port, "/services/site/leaderboard")  # the folder: to its index
        assert status == 301 and headers["Location"] == "/services/site/leaderboard/"
        for path in ("/services/site/leaderboard/../gradebook.csv", "/services/site/leaderboard/%2e%2e/gradebook.csv",
                     "/services/site/leaderboard/../dashboard/index.html", "/services/site/../grades/gradebook.csv",
                     "/services/site/leaderboard/..%2f.pseudonym-key", "/services/site/dashboard/index.html"):
            status, body, _ = get(port, path)
            assert status == 404 and "alice" not in body and "secret" not in body, path
    finally:
        httpd.shutdown()
    with pytest.raises(SystemExit):
        site_server.parse_args(["site", "--mount", "a/b=folder"])


def _hub_config(tmp_path, monkeypatch, admins: list[str]):
    from traitlets.config import Config

    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "roster.txt").write_text("student\nalice\n")
    (folder / "course.toml").write_text(f'[course]\nroster = "roster.txt"\nstate = "state"\ngrades = "grades"\n'
                                        f"admins = {admins!r}\n[hub]\nsite_port = 9182\n")
    monkeypatch.setenv("OPRT_COURSE_CONFIG", str(folder / "course.toml"))
    c = Config()
    runpy.run_path(str(HUB_CONFIG), init_globals={"get_config": lambda: c})
    return {s["name"]: s for s in c.JupyterHub.services}, folder


def test_hub_config_serves_the_leaderboard_and_the_dashboard_to_admins_only(tmp_path, monkeypatch):
    services, folder = _hub_config(tmp_path, monkeypatch, ["prof"])
    site = services["site"]["command"]
    assert site[site.index("--mount") + 1] == f"leaderboard={folder / 'grades' / 'leaderboard'}"
    dashboard = services["dashboard"]
    assert dashboard["url"] == "http://127.0.0.1:9183" and dashboard["oauth_no_confirm"]
    assert dashboard["command"][-2:] == [str(folder / "grades"), "prof"]
    assert "operator_course.hosting.dashboard_server" in dashboard["command"]
    assert "api_token" not in dashboard  # it asks the hub nothing beyond who the user is


def test_without_admins_no_dashboard_service(tmp_path, monkeypatch):
    services, _ = _hub_config(tmp_path, monkeypatch, [])
    assert "dashboard" not in services and "site" in services


USERS = {  # models as the hub's OAuth gives them: the scopes of the token for this service
    "prof": {"kind": "user", "name": "prof", "admin": True, "groups": [], "scopes": ["access:services"]},
    "hubadmin": {"kind": "user", "name": "hubadmin", "admin": True, "groups": [], "scopes": ["access:services"]},
    "alice": {"kind": "user", "name": "alice", "admin": False, "groups": [], "scopes": []},
    "granted-alice": {"kind": "user", "name": "alice", "admin": False, "groups": [],
                      "scopes": ["access:services!service=dashboard"]},
}


@pytest.fixture
def dashboard(grades, monkeypatch):
    """The dashboard service on a free port, its hub login stood in for by an X-Test-User header."""
    from jupyterhub.services.auth import HubOAuth

    for name, value in {"JUPYTERHUB_API_TOKEN": "t" * 32, "JUPYTERHUB_API_URL": "http://127.0.0.1:1/hub/api",
                        "JUPYTERHUB_CLIENT_ID": "service-dashboard", "JUPYTERHUB_SERVICE_NAME": "dashboard",
                        "JUPYTERHUB_SERVICE_PREFIX": "/services/dashboard/", "JUPYTERHUB_BASE_URL": "/",
                        "JUPYTERHUB_OAUTH_CALLBACK_URL": "/services/dashboard/oauth_callback",
                        "JUPYTERHUB_OAUTH_ACCESS_SCOPES": '["access:services!service=dashboard"]'}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(HubOAuth, "get_user", lambda self, handler, sync=True:
                        USERS.get(handler.request.headers.get("X-Test-User", "")))
    from operator_course.hosting.dashboard_server import make_app

    ready, box = threading.Event(), {}

    def serve():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        server = make_app(str(grades), {"prof"}).listen(0, "127.0.0.1")
        box["port"] = next(iter(server._sockets.values())).getsockname()[1]
        box["loop"], box["server"] = loop, server
        ready.set()
        loop.run_forever()
        server.stop()
        loop.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30)
    yield box["port"]
    box["loop"].call_soon_threadsafe(box["loop"].stop)
    thread.join(10)


def test_the_dashboard_is_for_the_courses_admins_only(dashboard):
    as_prof = {"X-Test-User": "prof"}
    status, body, _ = get(dashboard, "/services/dashboard/dashboard/index.html", as_prof)
    assert status == 200 and "alice" in body
    assert get(dashboard, "/services/dashboard/logs/alice/01_copy/notebook.log", as_prof)[:2] == (200, "alice's run")
    assert get(dashboard, "/services/dashboard/feedback/alice.md", as_prof)[0] == 200
    status, _, headers = get(dashboard, "/services/dashboard/", as_prof)
    assert status == 302 and headers["Location"] == "/services/dashboard/dashboard/index.html"
    for path in ("/services/dashboard/.pseudonym-key", "/services/dashboard/logs/../.pseudonym-key",
                 "/services/dashboard/%2e%2e/site/index.html", "/services/dashboard/../grades/gradebook.csv"):
        status, body, _ = get(dashboard, path, as_prof)
        assert status in (403, 404) and "secret" not in body and "course site" not in body, (path, status)
    # no hub login: sent to the hub's OAuth
    status, _, headers = get(dashboard, "/services/dashboard/dashboard/index.html")
    assert status == 302 and "/hub/api/oauth2/authorize" in headers["Location"]
    # a student (no scope for this service), an admin of the hub who is not the course's, a student
    # someone granted the scope to: none of them reads it
    for who in ("alice", "hubadmin", "granted-alice"):
        status, body, _ = get(dashboard, "/services/dashboard/dashboard/index.html", {"X-Test-User": who})
        assert status == 403 and "alice" not in body.replace("user alice is not allowed", ""), who
