"""The course site as a hub service: the built Jupyter Book (static files) served at the
service's prefix (/services/site/), which the proxy passes on unstripped. Relative links make
the same files work there, on a project page or from the file system.

    python -m operator_course.hosting.site_server FOLDER [--mount NAME=FOLDER ...]   (JupyterHub starts it)

A mount serves another folder under the prefix: hub_config.py mounts the grader's public
leaderboard (GRADES/leaderboard/, rebuilt after each grading run) as /services/site/leaderboard/,
so students open it like any page of the site; only that folder of the root-only grades is served
(the dashboard, feedback and logs are not: hosting/dashboard_server.py serves those to admins)."""

from __future__ import annotations

import argparse
import functools
import os
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


class Handler(SimpleHTTPRequestHandler):
    prefix = "/"
    mounts: dict[str, str] = {}  # first path segment under the prefix -> the folder it serves

    def translate_path(self, path):
        path = urlsplit(path).path
        if path.startswith(self.prefix):
            path = "/" + path[len(self.prefix):]
        first, _, rest = path.lstrip("/").partition("/")
        if first in self.mounts:  # this request's own folder (a handler serves one request)
            self.directory = self.mounts[first]
            path = "/" + rest
        return super().translate_path(path)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m operator_course.hosting.site_server")
    parser.add_argument("folder", help="the built site")
    parser.add_argument("--mount", action="append", default=[], metavar="NAME=FOLDER",
                        help="serve FOLDER as NAME/ under the prefix (repeatable)")
    args = parser.parse_args(argv)
    args.mounts = {}
    for item in args.mount:
        name, sep, folder = item.partition("=")
        if not sep or not name or "/" in name or name in (".", ".."):
            parser.error(f"--mount {item!r}: expected NAME=FOLDER, NAME one path segment")
        args.mounts[name] = os.path.abspath(folder)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    url = urlsplit(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:8002"))
    Handler.prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/site/")
    Handler.mounts = args.mounts
    server = ThreadingHTTPServer((url.hostname, url.port), functools.partial(Handler, directory=args.folder))
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # the hub stops its services with SIGINT
        pass


if __name__ == "__main__":
    main()
