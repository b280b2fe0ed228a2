"""Every source the book shows with ``literalinclude`` exists and holds the lines the directive cuts at
(``start-at``, ``start-after``, ``end-before``, ``end-at``): a kernel moved or renamed fails here, in
seconds, instead of the site build's one warning after the whole book has executed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIRECTIVE = re.compile(r"```\{literalinclude\}\s+(\S+)\n((?::[\w-]+:.*\n)*)")
CUTS = ("start-at", "start-after", "end-before", "end-at")


def includes():
    for page in sorted((ROOT / "book").rglob("*.md")):
        for m in DIRECTIVE.finditer(page.read_text()):
            # MyST reads option values as YAML: a quoted value stands for the text inside the quotes
            options = {k: v.strip().strip('"') for k, v in re.findall(r":([\w-]+):\s*(.*)", m.group(2))}
            yield pytest.param(page, m.group(1), options, id=f"{page.relative_to(ROOT)}:{m.group(1).split('/')[-1]}")


@pytest.mark.parametrize("page, target, options", list(includes()))
def test_included_source_holds_its_cut_lines(page, target, options):
    source = (page.parent / target).resolve()
    assert source.is_file(), f"{page.relative_to(ROOT)} includes {target}, which does not exist"
    text = source.read_text()
    for cut in CUTS:
        if cut in options:
            assert options[cut] in text, (f"{page.relative_to(ROOT)}: {cut} {options[cut]!r} is not in "
                                          f"{source.relative_to(ROOT)}")


def test_the_book_includes_sources():
    assert len(list(includes())) > 20  # the pattern above still finds the directives
