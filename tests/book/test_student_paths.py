"""The book sends a student to their own copy of a lab (handout/, or ~/labs/ on the hub), never to the
repository's labs/, which holds the instructor's solutions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTRUCTOR_COPY = re.compile(r"`labs/\d\d_\w+\.ipynb`")
PAGES = sorted((ROOT / "book").rglob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_no_page_points_a_student_at_the_solutions(page):
    found = INSTRUCTOR_COPY.findall(page.read_text())
    assert not found, f"{page.relative_to(ROOT)} names {found}: point at handout/ (make handout) instead"


def test_every_chapter_with_a_lab_names_the_handout():
    chapters = [p for p in (ROOT / "book" / "ops").glob("*.md") if "{doc}`../labs/" in p.read_text()]
    assert chapters and all("handout/" in p.read_text() for p in chapters)
