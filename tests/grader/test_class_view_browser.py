"""The class view as a browser shows it: headless Chromium (Debian's `chromium`, driven by
playwright as tests/book/test_site.py does) opens the public leaderboard and the instructor's
dashboard of the small graded class (class_view_class.py), served over HTTP as the hub serves them,
and finds the rows, the charts (loaded, not broken images) and the flagged pairs."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading

import pytest

from class_view_class import FLAGGED, PLANTED_PAIRS, PUBLIC, ROSTER, TIMED, build_class

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
playwright = pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright (requirements.txt)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install chromium)")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from operator_course.grader import class_data, class_view

    paths = build_class(tmp_path_factory.mktemp("class_view_browser"))
    class_view.build(paths["out"], paths["submissions"], paths["labs"], ROSTER)
    names = class_data.load(paths["out"]).names

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(paths["out"])))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/", names
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def visit(browser, url: str):
    page = browser.new_page()
    problems = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    page.goto(url, wait_until="networkidle")
    return page, problems


def charts_drawn(page) -> list[int]:
    """Each image's natural width: 0 for one the browser could not load or decode."""
    return page.eval_on_selector_all("img", "imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")


def test_the_leaderboard_shows_pseudonyms_their_chart_and_no_flagged_entry(browser, site):
    base, names = site
    page, problems = visit(browser, base + "leaderboard/index.html")
    try:
        assert not problems, problems
        rows = page.eval_on_selector_all("table.board tr.entry", "rs => rs.map(r => r.dataset.name)")
        assert rows == [names[s] for s in sorted(PUBLIC, key=lambda s: -TIMED[s])]
        baselines = page.eval_on_selector_all("table.board tr.baseline", "rs => rs.map(r => r.innerText)")
        assert any("torch" in b for b in baselines) and any("reference" in b for b in baselines)
        widths = charts_drawn(page)
        assert widths and all(w > 300 for w in widths), widths
        text = page.inner_text("body")
        assert not [s for s in ROSTER if s in text]
        assert not [s for s in FLAGGED if names[s] in text]
    finally:
        page.close()


def test_the_dashboard_shows_flags_similar_pairs_charts_and_logs(browser, site):
    base, names = site
    page, problems = visit(browser, base + "dashboard/index.html")
    try:
        assert not problems, problems
        widths = charts_drawn(page)
        assert len(widths) >= 3 and all(w > 300 for w in widths), widths
        flagged = page.eval_on_selector_all("table.flags tr.flagged", "rs => rs.map(r => r.dataset.student)")
        assert set(flagged) == FLAGGED
        pairs = page.eval_on_selector_all("div.pair", "ds => ds.map(d => [d.dataset.lab, d.dataset.a, d.dataset.b])")
        assert {tuple(p) for p in pairs} == PLANTED_PAIRS
        for lab, a, b in PLANTED_PAIRS:  # the matching spans, one column per student, both visible
            pair = page.locator(f'div.pair[data-a="{a}"][data-b="{b}"]')
            spans = pair.locator("table.spans tr td pre")
            assert spans.count() >= 2 and spans.first.is_visible() and spans.first.inner_text().strip()
            header = pair.locator("table.spans th").all_inner_texts()
            assert header == [a, b]
        board = page.eval_on_selector_all("table.board tr.entry", "rs => rs.map(r => r.dataset.name)")
        assert set(board) == set(TIMED)
        for name in ("notebook.log", "executed.ipynb"):  # the links into OUT/logs/ lead to the files
            url = page.eval_on_selector(f'a[href="../logs/honest_1/01_copy/{name}"]', "a => a.href")
            got = page.request.get(url)
            assert got.status == 200 and ("honest_1's run" in got.text() if name == "notebook.log" else got.json())
    finally:
        page.close()
