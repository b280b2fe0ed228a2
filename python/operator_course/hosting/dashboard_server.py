"""The instructor's dashboard as a hub service, for the course's admins only:

    python -m operator_course.hosting.dashboard_server GRADES ADMIN...   (JupyterHub starts it)

serves the grades folder (GRADES/dashboard/index.html at the service's root, and the feedback,
logs and executed notebooks its links point at) at /services/dashboard/. Who may see it is
decided twice: the hub gives a user a token for this service only with the scope
access:services!service=dashboard, which its admin role has and the students' user role does not
(JupyterHub's OAuth, HubOAuthenticated); and the user the hub names must be one of ADMIN (the
course.toml admins). Anyone else gets 403; a browser with no hub login is sent to log in.
Dot files (the pseudonym key) are never served. hub_config.py starts it when course.toml names
admins; without admins the dashboard is only a file, OUT/dashboard/index.html, to open where the
grades are."""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

from tornado import web


def make_app(grades: str, admins: set[str], prefix: str = "/services/dashboard/") -> web.Application:
    from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated, UserNotAllowed

    class Instructors(HubOAuthenticated):
        def check_hub_user(self, model):
            model = super().check_hub_user(model)  # the hub's scopes: access:services!service=dashboard
            if model.get("kind", "user") != "user" or model.get("name") not in admins:
                raise UserNotAllowed(model)  # answered 403, not sent to log in again
            return model

    class Files(Instructors, web.StaticFileHandler):
        @web.authenticated
        async def get(self, path, include_body=True):
            if any(part.startswith(".") for part in path.split("/")):
                raise web.HTTPError(404)
            await super().get(path, include_body)

    class Root(Instructors, web.RequestHandler):
        @web.authenticated
        def get(self):
            self.redirect(prefix + "dashboard/index.html")

    return web.Application([
        (prefix, Root),
        (prefix + "oauth_callback", HubOAuthCallbackHandler),
        (prefix + "(.+)", Files, {"path": os.path.abspath(grades)}),
    ], cookie_secret=os.urandom(32))


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    grades, admins = argv[0], set(argv[1:])
    url = urlsplit(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:8083"))
    app = make_app(grades, admins, os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/dashboard/"))
    app.listen(url.port, url.hostname)
    import asyncio

    try:
        asyncio.get_event_loop_policy().get_event_loop().run_forever()
    except KeyboardInterrupt:  # the hub stops its services with SIGINT
        pass


if __name__ == "__main__":
    main()
