"""The course site as a hub service: the built Jupyter Book (static files) served at the
service's prefix (/services/site/), which the proxy passes on unstripped. Relative links make
the same files work there, on a project page or from the file system.

    python -m operator_course.hosting.site_server FOLDER   (JupyterHub starts it)"""

from __future__ import annotations

import functools
import os
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


class Handler(SimpleHTTPRequestHandler):
    prefix = "/"

    def translate_path(self, path):
        path = urlsplit(path).path
        if path.startswith(self.prefix):
            path = "/" + path[len(self.prefix):]
        return super().translate_path(path)


def main() -> None:
    folder = sys.argv[1]
    url = urlsplit(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:8002"))
    Handler.prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/site/")
    server = ThreadingHTTPServer((url.hostname, url.port), functools.partial(Handler, directory=folder))
    server.serve_forever()


if __name__ == "__main__":
    main()
