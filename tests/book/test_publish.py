"""The built site publishes as it is: no link or resource starts at the server's root (so it
works from a sub-path such as a project page, and from the file system), a .nojekyll file is
in it, and the pages workflow uploads it. The site served one folder down (/course/) answers
every local link of its pages. Needs the built site (make course)."""

from __future__ import annotations

import functools
import http.server
import re
import threading
import urllib.request
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
LINK = re.compile(r'(?:href|src)="([^"#?]*)[^"]*"')

pytestmark = pytest.mark.skipif(not (SITE / "index.html").exists(), reason="no built site: run `make course` first")


def pages() -> list[Path]:
    return [p for p in SITE.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts]


def test_no_link_starts_at_the_server_root():
    rooted = [(str(p.relative_to(SITE)), link) for p in pages() for link in LINK.findall(p.read_text(errors="replace"))
              if link.startswith("/") and not link.startswith("//")]
    assert not rooted, rooted[:10]


def test_nojekyll_and_the_pages_workflow():
    assert (SITE / ".nojekyll").exists(), "make book writes _build/html/.nojekyll"
    workflow = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    assert "path: _build/html" in workflow and "make course" in workflow


def test_the_site_from_a_sub_path(tmp_path):
    (tmp_path / "course").symlink_to(SITE, target_is_directory=True)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}/course/"
    try:
        broken = []
        for page in ["index.html", *sorted(str(p.relative_to(SITE)) for p in pages())[:20]]:
            url = urljoin(base, page)
            text = urllib.request.urlopen(url, timeout=30).read().decode(errors="replace")
            for link in set(LINK.findall(text)):
                target = urljoin(url, link)
                if not link or urlsplit(link).scheme or link.startswith("//"):
                    continue
                assert target.startswith(base), (page, link)
                try:
                    urllib.request.urlopen(target, timeout=30).close()
                except OSError as e:
                    broken.append((page, link, str(e)))
        assert not broken, broken[:10]
    finally:
        httpd.shutdown()
