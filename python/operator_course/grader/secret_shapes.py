"""The grader's own lab shapes, read from the instructor's side (``labs/secret_shapes.py`` unless
``--secret-shapes`` names another file): a ``SECRET_SHAPES`` dict, operator -> a function of a
``random.Random`` returning shapes. Never part of the installed package, which students can read."""

from __future__ import annotations

import random
import runpy
from pathlib import Path

from operator_runtime_testing.operators import get


def default_path(labs: Path) -> Path:
    return labs / "secret_shapes.py"


def load(path: Path, ops: list[str]) -> dict:
    """op -> its draw, for each of ``ops``; ValueError naming the file for anything malformed (an
    operator missing, a draw that fails or returns no shape of the operator's rank)."""
    try:
        table = runpy.run_path(str(path)).get("SECRET_SHAPES")
    except Exception as e:  # the instructor's file: say which and why, then stop
        raise ValueError(f"--secret-shapes {path}: {type(e).__name__}: {e}") from e
    if not isinstance(table, dict):
        raise ValueError(f"--secret-shapes {path}: defines no SECRET_SHAPES dict (operator -> draw)")
    missing = sorted(set(ops) - set(table))
    if missing:
        raise ValueError(f"--secret-shapes {path}: no draw for {', '.join(missing)}")
    for op in ops:
        rank = len(get(op).lab_shapes[0])
        try:
            shapes = tuple(table[op](random.Random(0)))
        except Exception as e:
            raise ValueError(f"--secret-shapes {path}: {op}'s draw fails: {type(e).__name__}: {e}") from e
        if not shapes or any(len(s) != rank or not all(isinstance(d, int) and d >= 0 for d in s) for s in shapes):
            raise ValueError(f"--secret-shapes {path}: {op}'s draw must return shapes of {rank} sizes >= 0, "
                             f"not {shapes!r}")
    return {op: table[op] for op in ops}
