"""What a student reads when a TileLang program does not build: the line of their cell, the
error in one or two lines, and a hint for the mistakes every class makes. TileLang's own report
(a traceback through its parser and compiler, sometimes with the generated program) is kept
whole as the long form: behind a toggle in the notebook, in the per-student log when grading.

The notebook check (checks.py) and the grader's export (export.py, runner.py) both call
``explain``, so the two say the same words."""

from __future__ import annotations

import io
import logging
import os
import re
import sys
import tempfile
import traceback
from contextlib import contextmanager
from pathlib import Path

# (pattern in the error message, pattern in the student's line or None, hint)
HINTS = [
    (r"multiple types of integer divisions", None,
     "`/` between TileLang integers is ambiguous: the number of tiles is T.ceildiv(n, TILE); an index within "
     "a tile is i // TILE and i % TILE; a fraction needs a float on one side, e.g. a scale "
     "1.0 / T.sqrt(T.cast(dim, \"float32\"))"),
    (r"Cannot use and / or / not operator to Expr", r"\b(max|min)\(",
     "Python's max() and min() compare with `>`, which a TileLang expression cannot answer while the program "
     "is built: use T.max(a, b) and T.min(a, b)"),
    # TileLang (0.1.15) compiles the `if`s, `a if c else b`s, `and`s of the @T.prim_func body itself (and of a
    # T.macro): it rewrites that source. A helper function or lambda defined outside it, called with TileLang
    # values, runs as Python while the program is built: `j < n` there cannot be True or False (`j == n` can,
    # silently: TVM compares the two expressions' structure)
    (r"Cannot use and / or / not operator to Expr", r"^\s*(el)?if\b|\bif\b.+\belse\b",
     "a Python `if` (or `a if cond else b`) needs True or False while the program is built, and a comparison of "
     "TileLang values has one only when the kernel runs. TileLang compiles the `if`s written in the @T.prim_func "
     "body itself, but this line is in a Python function (or lambda) it calls, so Python runs it, once, at build "
     "time. Choose between values with T.if_then_else(cond, a, b), e.g. T.if_then_else(j < n, X[row, j], 0.0) "
     "(T.And(a, b) joins two conditions), or write the `if` in the kernel's body"),
    (r"Cannot use and / or / not operator to Expr", None,
     "`and`, `or`, `not` need True or False now, but a TileLang expression has a value only when the kernel "
     "runs: combine conditions with T.And(a, b) / T.Or(a, b), or nest the `if`s"),
    # math.exp(x - m) with TileLang values: Python's math wants a number while the program is built
    (r"must be real number, not", None,
     "a function of Python's math module (math.exp, math.sqrt, math.log...) was given a TileLang value, which "
     "has a number only when the kernel runs: use TileLang's own, T.exp(x), T.sqrt(x), T.log(x) (math on plain "
     "Python numbers, e.g. 1.0 / math.sqrt(128), is fine)"),
    (r"is not defined", None, "a name your program uses is not defined when it is built: define it in the "
     "cell (TILE, a helper), or run the cells above first"),
    (r"takes \d+ positional arguments? but \d+ (were|was) given", None,
     "a TileLang function was called with the wrong number of arguments: T.exp(x), T.max(a, b), "
     "T.cast(x, \"float32\"), T.ceildiv(a, b)"),
    # a T.copy between a global tensor and a shared tile, in T.Pipelined or not (a blind student's lab 1
    # answer with T.alloc_shared met it under T.serial, where the T.Pipelined-only words misled)
    (r"dtype mismatch: int64 vs int32", None,
     "for a T.copy to or from a shared tile (T.alloc_shared; also T.Pipelined's asynchronous copies) TileLang "
     "(0.1.15) builds the addresses from 32-bit thread offsets and cannot add a 64-bit tile offset to them: "
     "compute the tile index in 32 bits, e.g. first = T.cast(bx, \"int32\") * STEPS, then (first + k) * TILE, "
     "or copy through a fragment (T.alloc_fragment)"),
    # nvcc on TileLang's CUDA for T.gemm with a bfloat16 accumulator (seen on the H200, TileLang 0.1.15)
    (r"mma_sync: unsupported configuration|wgmma.*unsupported", None,
     "T.gemm accumulates in its third argument's dtype, and the tensor cores have no instruction that "
     "accumulates in bfloat16 (a float16 or bfloat16 accumulator also drifts over a long K): allocate it "
     "T.alloc_fragment((BM, BN), \"float32\") and round to the output dtype once, in the final T.copy"),
    (r"layout for fragment .* can not be inferred", None,
     "TileLang could not decide how the fragment's elements map to threads: fill it with T.copy, T.fill / "
     "T.clear or a T.Parallel loop over its whole shape before reading it"),
]
_NVCC_ERROR = re.compile(r"\S+\(\d+\): (?:catastrophic )?error: (.*)")
_PACKAGE = str(Path(__file__).resolve().parents[2])  # python/ of this checkout


@contextmanager
def captured_log():
    """TileLang's log while a program is built or compiled, kept instead of printed: when a build
    fails it logs the generated program (dozens of lines) at CRITICAL, before the real error. Its C++
    half writes warnings straight to file descriptor 2 ("T.vectorized loop ... lowered as a serial
    loop", for a correct program on the C target), which Jupyter shows in the cell: those are kept
    too, read back into the log when the build is done."""
    logger = logging.getLogger("tilelang")
    kept = io.StringIO()
    saved = logger.handlers[:], logger.propagate
    logger.handlers, logger.propagate = [logging.StreamHandler(kept)], False
    with tempfile.TemporaryFile() as native:
        sys.stderr.flush()
        stderr = os.dup(2)
        os.dup2(native.fileno(), 2)
        try:
            yield kept
        finally:
            os.dup2(stderr, 2)
            os.close(stderr)
            logger.handlers, logger.propagate = saved
            native.seek(0)
            kept.write(native.read(1 << 20).decode(errors="replace"))


def explain(e: BaseException, who: str, what: str, log: str = "") -> tuple[str, str]:
    """(the short text a student reads, the full report) for the exception ``e`` raised while
    ``what`` ("building the float32 program", "compiling ...") happened to ``who``'s program
    ("copy (TileLang)")."""
    full = "".join(traceback.format_exception(type(e), e, e.__traceback__)) + (f"\nTileLang's log:\n{log}" if log else "")
    message = str(e).strip()
    first = next((ln for ln in message.splitlines() if ln.strip()), type(e).__name__)
    if first.startswith("Compilation Failed"):  # TileLang's CUDA did not build: nvcc's first error, not its command
        # nvcc's diagnostics read "file(line): error: ..."; the CUDA source after them has its own
        # "error: " strings (TileLang's launch-error messages), which are not the error
        nvcc = next((m for m in map(_NVCC_ERROR.match, message.splitlines()) if m), None)
        if nvcc:
            first = "nvcc could not compile TileLang's CUDA for your program: " + nvcc.group(1).strip()
    spans = [ln.rstrip() for ln in message.splitlines() if re.match(r"\s*(-->|\d*\s*\|)", ln)]
    line_no, code = _student_line(e)
    hint = next((h for pattern, in_line, h in HINTS
                 if re.search(pattern, message) and (in_line is None or re.search(in_line, code or ""))), None)
    if hint:  # ours replaces TVM's own advice, which names functions students never see
        first = first.split(", hint:")[0]
    lines = [f"{who}: your program failed while {what}."]
    if line_no:
        lines.append(f"  line {line_no} of your cell: {code.strip()}")
    lines.append(f"{type(e).__name__}: {first}")
    lines += spans[:6]
    if hint:
        lines.append(f"Hint: {hint}.")
    if full.count("\n") > len(lines) + 2:
        lines.append("(TileLang's full report: the toggle above in the notebook; the log beside your feedback "
                     "when graded.)")
    return "\n".join(lines), full


def _student_line(e: BaseException) -> tuple[int | None, str]:
    """The last traceback frame in the student's own code: not TileLang's, TVM's or ours."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if _students(f.filename)]
    if not frames:
        return None, ""
    return frames[-1].lineno, frames[-1].line or ""


# ipykernel's name for a cell's code (/tmp/ipykernel_<pid>/<hash>.py): known to linecache, never on disk, so
# the is_file() test below missed it and a notebook's build errors named no line (a blind student's lab 6)
_CELL_FILE = re.compile(r"[/\\]ipykernel_\d+[/\\]\d+\.py$")


def _students(filename: str) -> bool:
    """A cell's file (ipykernel writes each cell to its own file; older IPython names it
    <ipython-input-...>), not a library's (site-packages, the standard library, ours) nor a frame
    TVM adds for its C++ code (function.pxi, /project/src/...cc)."""
    if filename.startswith("<ipython-input") or _CELL_FILE.search(filename):
        return True
    library = "site-packages" in filename or "dist-packages" in filename or filename.startswith(_library_roots())
    return (filename.endswith(".py") and Path(filename).is_file() and not library
            and not filename.startswith((_PACKAGE, sys.base_prefix, sys.prefix, sys.exec_prefix)))


def _library_roots() -> tuple[str, ...]:
    """Where the libraries a lab program goes through live, wherever they were installed (the GPU
    machine unpacks TileLang into a plain folder on PYTHONPATH, not a site-packages)."""
    roots = []
    for name in ("tilelang", "tvm", "tvm_ffi", "torch"):
        module = sys.modules.get(name)
        if getattr(module, "__file__", None):
            roots.append(str(Path(module.__file__).resolve().parent) + "/")
    return tuple(roots)
