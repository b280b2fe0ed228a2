"""scripts/ holds tools a maintainer reruns, not history: every file is listed in the README's
"Maintainer tools" table and shows how it is run at its top; one-off rounds and probes stay out
(what they found belongs in a chapter, a comment at a constant, or the committed results)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "scripts").iterdir() if p.is_file())


def tools_table() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("### Maintainer tools")
    return readme[start:readme.index("\n#", start + 1)]


def test_every_script_is_a_listed_tool():
    table = tools_table()
    unlisted = [p.name for p in SCRIPTS if f"`scripts/{p.name}`" not in table]
    assert not unlisted, f"add these to README.md's 'Maintainer tools' table with what they are for: {unlisted}"
    gone = [name for name in re.findall(r"`scripts/([\w.-]+)`", table) if not (ROOT / "scripts" / name).is_file()]
    assert not gone, f"README.md's 'Maintainer tools' lists scripts that are gone: {gone}"


def test_every_script_shows_its_usage_at_the_top():
    missing = [p.name for p in SCRIPTS if f"scripts/{p.name}" not in "".join(p.read_text().splitlines(True)[:20])]
    assert not missing, f"these scripts do not show how they are run in their first 20 lines: {missing}"


def test_no_rounds_or_probes():
    history = [p.name for p in SCRIPTS if re.search(r"round|probe", p.name)]
    assert not history, f"one-off rounds and probes leave scripts/ (git keeps them): {history}"
