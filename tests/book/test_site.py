"""The published site, as a reader's browser sees it: headless Chromium over _build/html.

Every page loads without console errors or failed requests, every image loads, internal
links resolve, each operator chapter shows its charts and its lesson (step chart, diagram,
CUDA and TileLang tabs), and the site search finds
"softmax". Needs the built site (make course / make test build it) and Chromium
(Debian's `chromium`; .ci/run installs it).
"""

from __future__ import annotations

import functools
import html
import http.server
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from operator_runtime_testing.operators import OPERATORS, chapter

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# every operator's chapter (operator_runtime_testing.operators: one per operator, in the course's order)
OPERATOR_PAGES = [chapter(op).removesuffix(".md") + ".html" for op in OPERATORS]
# Chromium flags for a closed network: no background fetches that would fail noisily.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

playwright = pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright (requirements.txt)")
pytestmark = [
    pytest.mark.skipif(not (SITE / "index.html").exists(), reason="no built site: run `make course` first"),
    pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def server():
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def site_pages() -> list[str]:
    skip = {"genindex.html", "search.html"}
    return sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html")
                  if p.name not in skip and "_static" not in p.parts and "_sources" not in p.parts)


def visit(browser, url: str):
    """Open url; return the page and the problems seen while loading it."""
    page = browser.new_page()
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text} ({m.location.get('url')})")
            if m.type == "error" and not m.location.get("url", "").endswith("/favicon.ico") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    # The browser asks for /favicon.ico on its own; a page's own requests must all succeed.
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    page.goto(url, wait_until="networkidle")
    return page, problems


@pytest.mark.parametrize("path", site_pages())
def test_page_loads_cleanly(browser, server, path):
    page, problems = visit(browser, server + path)
    try:
        broken_images = page.eval_on_selector_all("img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
        assert not problems, f"{path}: " + "; ".join(problems)
        assert not broken_images, f"{path}: images that did not load: {broken_images}"
        for href in page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))"):
            target = urlparse(urljoin(page.url, href))  # page.url: after any redirect
            if target.netloc != urlparse(server).netloc or target.scheme not in ("http", "https"):
                continue
            local = SITE / unquote(target.path.lstrip("/"))
            assert local.exists() or (local / "index.html").exists(), f"{path}: broken internal link {href}"
    finally:
        page.close()


@pytest.mark.parametrize("path", OPERATOR_PAGES)
def test_operator_chapter_shows_its_charts(browser, server, path):
    page, _ = visit(browser, server + path)
    try:
        charts = page.eval_on_selector_all(
            "div.cell_output img", "imgs => imgs.filter(i => i.complete && i.naturalWidth > 400).length")
        assert charts >= 1, f"{path}: no chart rendered"
        assert page.locator("table").count() >= 1, f"{path}: no results table"
    finally:
        page.close()


@pytest.mark.parametrize("path", OPERATOR_PAGES)
def test_operator_chapter_shows_its_lesson(browser, server, path):
    """Each chapter is a lesson: its step-progression chart and a diagram (cells tagged step-chart
    and diagram: MyST-NB makes a cell's tags classes, tag_<name>) render as real images, and the
    CUDA and TileLang steps sit side by side in tabs."""
    page, _ = visit(browser, server + path)
    try:
        for tag in ("step-chart", "diagram"):
            shown = page.eval_on_selector_all(
                f"div.tag_{tag} div.cell_output img", "imgs => imgs.filter(i => i.complete && i.naturalWidth > 400).length")
            assert shown >= 1, f"{path}: no {tag} image rendered"
        assert page.locator("div.sd-tab-set").count() >= 1, f"{path}: no CUDA / TileLang tabs"
        assert page.locator("h3:has-text('Step 1')").count() >= 1, f"{path}: no Step 1 heading"
    finally:
        page.close()


def test_search_finds_softmax(browser, server):
    page, problems = visit(browser, server + "search.html?q=softmax")
    try:
        page.wait_for_selector("#search-results li a", timeout=15_000)
        hits = page.eval_on_selector_all("#search-results li a", "as => as.map(a => a.getAttribute('href'))")
        assert any("softmax" in h for h in hits), f"search for softmax found {hits}"
        assert not problems, "; ".join(problems)
    finally:
        page.close()


def lab_secrets() -> set[str]:
    """Solution lines of the instructor labs that appear nowhere a student may see them: lines
    that also occur in the runtime's own kernels (ops/, shown in the chapters) are common code."""
    from operator_course.grader.notebook import read, solution_lines

    secret = {line for lab in sorted((ROOT / "labs").glob("*.ipynb")) for c in read(lab).cells
              for line in solution_lines(c.source)}
    shown = "\n".join(p.read_text() for p in (ROOT / "ops").rglob("*") if p.suffix in {".py", ".cu", ".cc", ".h", ".cuh"})
    return {line for line in secret if line not in shown}


def page_text(path: Path) -> str:
    """What a reader can see or download: tags stripped (highlighting splits code into spans)."""
    text = path.read_text(errors="replace")
    return html.unescape(re.sub(r"<[^>]+>", "", text)) if path.suffix == ".html" else text


def test_site_holds_no_lab_solution():
    """The site renders the student versions of the labs: no line of any solution may appear in
    its pages or in the sources it publishes (_sources, downloadable notebooks)."""
    secret = lab_secrets()
    assert len(secret) > 20, "the labs mark too few distinctive solution lines to test"
    published = [p for p in SITE.rglob("*") if p.is_file() and p.suffix in {".html", ".ipynb", ".md", ".txt", ".py"}]
    assert any("labs" in p.parts for p in published), "the site should include the labs"
    for path in published:
        text = page_text(path)
        leaked = [line for line in secret if line in text]
        assert not leaked, f"{path.relative_to(SITE)} shows solution text: {leaked[:2]}"
