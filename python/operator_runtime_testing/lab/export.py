"""The grader's side of a check cell, run in the student's sandboxed notebook: instead of
checking, it saves what the check would judge, as data, into ``artifacts/<check>/``:

  tilelang: ``<dtype>.json``, the program ``factory(dtype, gpu)`` builds, serialized by TVM
  cuda:     ``source.cu``, the CUDA source text
  either:   ``error.txt`` when the answer could not be produced (say, a NameError)

The grader reads these files only as data: it never imports or runs the student's Python.
A student who changes what lands here submits a different kernel, which is then graded."""

from __future__ import annotations

import traceback
from pathlib import Path

ARTIFACTS = Path("artifacts")
MAX_SOURCE = 256 * 1024  # characters of CUDA source; real answers are a few hundred


def save(check: str, kind: str, get_answer, dtypes: list[str], gpu: bool) -> None:
    folder = ARTIFACTS / check
    folder.mkdir(parents=True, exist_ok=True)
    try:
        answer = get_answer()
        if kind == "tilelang":
            _save_programs(folder, answer, dtypes, gpu)
        else:
            if not isinstance(answer, str):
                raise TypeError(f"the CUDA source must be a str, not {type(answer).__name__}")
            if len(answer) > MAX_SOURCE:
                raise ValueError(f"the CUDA source has {len(answer)} characters; the limit is {MAX_SOURCE}")
            (folder / "source.cu").write_text(answer)
        print(f"{check}: saved for grading")
    except Exception as e:  # noqa: BLE001 - any failure is the answer's, reported to the student
        (folder / "error.txt").write_text(_describe(e))
        print(f"{check}: could not be saved for grading: {type(e).__name__}: {e}")


def _save_programs(folder: Path, factory, dtypes: list[str], gpu: bool) -> None:
    from tilelang import tvm

    if not callable(factory):
        raise TypeError(f"expected a function returning a T.prim_func, got {type(factory).__name__}")
    for dtype in dtypes:
        program = factory(dtype, gpu)
        if not isinstance(program, tvm.tirx.PrimFunc):
            raise TypeError(f"the function returned {type(program).__name__} for {dtype}, not a T.prim_func")
        (folder / f"{dtype}.json").write_text(tvm.ir.save_json(program))


def _describe(e: BaseException) -> str:
    """The exception and the last frames of the student's own code (cells run as <ipython-input>)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.endswith("export.py")]
    where = "".join(traceback.format_list(frames[-3:]))
    return f"{type(e).__name__}: {e}\n{where}".strip()
