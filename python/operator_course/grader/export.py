"""The grader's side of a check cell, run in the student's sandboxed notebook: instead of
checking, it saves what the check would judge, as data, into ``artifacts/<check>/``:

  tilelang: ``<dtype>.json``, the program ``factory(dtype, gpu)`` builds, serialized by TVM
  cuda:     ``source.cu``, the CUDA source text
  either:   ``error.txt`` when the answer could not be produced (say, a NameError), in the words
            the notebook's check uses (build_errors.py), and ``report.txt``, the full traceback

The grader reads these files only as data: it never imports or runs the student's Python.
A student who changes what lands here submits a different kernel, which is then graded."""

from __future__ import annotations

import contextlib
import traceback
from pathlib import Path

ARTIFACTS = Path("artifacts")
MAX_SOURCE = 256 * 1024  # characters of CUDA source; real answers are a few hundred


def save(check: str, kind: str, get_answer, dtypes: list[str], gpu: bool, who: str = "", answer: str = "") -> None:
    folder = ARTIFACTS / check
    folder.mkdir(parents=True, exist_ok=True)
    try:
        try:
            value = get_answer()
        except Exception as e:  # noqa: BLE001 - the answer cell did not define it
            raise Unavailable(f"`{answer}` could not be taken from your notebook:\n{_describe(e)}") from e
        if kind == "tilelang":
            _save_programs(folder, value, dtypes, gpu, who)
        else:
            if not isinstance(value, str):
                raise Unavailable(f"the CUDA source must be a str, not {type(value).__name__}")
            if len(value) > MAX_SOURCE:
                raise Unavailable(f"the CUDA source has {len(value)} characters; the limit is {MAX_SOURCE}")
            (folder / "source.cu").write_text(value)
        print(f"{check}: saved for grading")
    except Exception as e:  # noqa: BLE001 - any failure is the answer's, reported to the student
        text = str(e) if isinstance(e, Unavailable) else _describe(e)
        (folder / "error.txt").write_text(text)
        (folder / "report.txt").write_text("".join(traceback.format_exception(e.__cause__ or e)))
        print(f"{check}: could not be saved for grading:\n{text}")


class Unavailable(Exception):
    """The answer could not be saved; the message is the student's feedback, whole."""


def _save_programs(folder: Path, factory, dtypes: list[str], gpu: bool, who: str) -> None:
    from tilelang import tvm

    from operator_course.lab.build_errors import captured_log, explain

    if not callable(factory):
        raise Unavailable(f"expected a function returning a T.prim_func, got {type(factory).__name__}")
    # a CPU grader runs the CPU's programs; the GPU's of each dtype must build as well, and are compared
    # there (gpu-<dtype>.json: one that raised for float16 only once passed); bfloat16's too, which a CPU
    # cannot run: the runner holds it against the float16 one (a wrong bfloat16-only branch once passed)
    gpu_dtypes = dtypes + ["bfloat16"] * ("float16" in dtypes and "bfloat16" not in dtypes)
    builds = [(dtype, gpu, "") for dtype in dtypes] + [(dtype, True, "gpu-") for dtype in gpu_dtypes if not gpu]
    for dtype, for_gpu, prefix in builds:
        where = " for a GPU (gpu=True)" if prefix else ""
        try:
            with captured_log() as log, (_as_on_a_gpu() if prefix else contextlib.nullcontext()):
                program = factory(dtype, for_gpu)
        except Exception as e:  # noqa: BLE001 - the student's program does not build: their error
            raise Unavailable(explain(e, who, f"building the {dtype} program{where}", log.getvalue())[0]) from e
        if not isinstance(program, tvm.tirx.PrimFunc):
            raise Unavailable(f"the function returned {type(program).__name__} for {dtype}{where}, not a T.prim_func")
        (folder / f"{prefix}{dtype}.json").write_text(tvm.ir.save_json(program))


@contextlib.contextmanager
def _as_on_a_gpu():
    """While a CPU machine builds the GPU's program, torch says a GPU is there. A factory that asked
    ``torch.cuda.is_available()`` instead of its ``gpu`` argument handed a CPU grader its CPU program
    for gpu=True too (a serial loop that is right on the C target): the two matched, and the CPU's
    verdict counted for a program no GPU would run. Now the GPU program it builds is its GPU one, and
    where that differs the check waits for a GPU grader (lab.kernels.gpu_program_differs). A student's
    notebook could undo this; the grader's GPU pass judges whatever it then saved."""
    import torch

    saved = torch.cuda.is_available, torch.cuda.device_count
    torch.cuda.is_available, torch.cuda.device_count = (lambda: True), (lambda: 1)
    try:
        yield
    finally:
        torch.cuda.is_available, torch.cuda.device_count = saved


def _describe(e: BaseException) -> str:
    """The exception and the last frames of the student's own code (cells run as <ipython-input>)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.endswith("export.py")]
    where = "".join(traceback.format_list(frames[-3:]))
    return f"{type(e).__name__}: {e}\n{where}".strip()
