"""Importing TileLang through the backend shows no library warning: TileLang imports tqdm.auto, which in
a Jupyter kernel without ipywidgets warns "IProgress not found" on stderr, before a lab check's own
feedback (seen on the GPU machine, where tests/grader/test_check_output.py failed on it). Checked with a
stand-in tilelang package that warns as tqdm does on import."""

from __future__ import annotations

import sys
import warnings

from operator_runtime._internal import tilelang_backend


def test_the_progress_bar_warning_of_tilelangs_import_is_not_shown(tmp_path, monkeypatch):
    package = tmp_path / "tilelang"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import warnings\n"
        "warnings.warn('IProgress not found. Please update jupyter and ipywidgets.', UserWarning)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = {n: m for n, m in sys.modules.items() if n == "tilelang" or n.startswith("tilelang.")}
    for name in real:
        del sys.modules[name]
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            module = tilelang_backend._tilelang()
    finally:  # the real package back, the stand-in gone, for the tests after this one
        sys.modules.pop("tilelang", None)
        sys.modules.update(real)
    assert module.__file__.startswith(str(tmp_path)), module.__file__
    assert not [w for w in seen if "IProgress" in str(w.message)], [str(w.message) for w in seen]
