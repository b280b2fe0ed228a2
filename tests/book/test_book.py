"""The course chapters run as tests: each MyST notebook in _toc.yml is converted to .ipynb
and executed by nbval against the built runtime, so a chapter whose code breaks fails here.

Chapters store no outputs (the site build executes them), so cells are checked for
running without error (--nbval-lax), not for matching stored outputs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
jupytext = pytest.importorskip("jupytext", reason="converting MyST chapters needs jupytext (requirements.txt)")
yaml = pytest.importorskip("yaml")


def toc_files(node) -> list[str]:
    files = [node["file"]] if isinstance(node, dict) and "file" in node else []
    if isinstance(node, dict) and "root" in node:
        files.append(node["root"])
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    for child in children:
        if isinstance(child, (dict, list)):
            files += toc_files(child)
    return files


def notebook_chapters() -> list[Path]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [ROOT / f"{name}.md" for name in toc_files(toc)]
    return [p for p in pages if p.exists() and "```{code-cell}" in p.read_text()]


def test_every_toc_page_exists():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    missing = [name for name in toc_files(toc) if not any((ROOT / f"{name}{ext}").exists() for ext in (".md", ".ipynb"))]
    assert not missing, f"_toc.yml names pages that do not exist: {missing}"


@pytest.mark.parametrize("chapter", notebook_chapters(), ids=lambda p: str(p.relative_to(ROOT)))
def test_chapter_executes(chapter: Path, tmp_path: Path):
    notebook = tmp_path / chapter.relative_to(ROOT).with_suffix(".ipynb")
    notebook.parent.mkdir(parents=True)
    jupytext.write(jupytext.read(chapter), notebook)
    # Run where the chapter lives, so its relative paths resolve as in the site build.
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env",
         "--rootdir", str(tmp_path), str(notebook)],
        cwd=chapter.parent, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, f"{chapter.name} failed under nbval:\n{result.stdout[-4000:]}\n{result.stderr[-2000:]}"
