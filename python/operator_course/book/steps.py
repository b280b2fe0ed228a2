"""The chapters' step kernels: each operator taught from its simplest correct kernel to the tuned one.

    ops/<op>/steps/NN_name.cu   a CUDA step: a templated kernel and the host ``launch<T>(...)`` that
                                sizes its grid (cuda_build.STEP_LAUNCHERS calls it)
    ops/<op>/steps/NN_name.py   a TileLang step: ``program(dtype, gpu) -> T.prim_func``

The last step of each language is the production kernel (ops/<op>/nvidia, ops/<op>/tilelang),
reached through the runtime, never copied here. A step's title is the first line of its file's
leading comment or docstring ("Step 2: a grid-stride loop." -> "a grid-stride loop").

Steps are built by the lab toolchain, not by the runtime's CMake (which globs only
ops/<op>/*.cc and ops/<op>/<backend>/): nvcc for a GPU (cuda_build), g++ against our CUDA header
on a CPU (cuda_cpu), TileLang for CUDA or its C target (kernels.compile_tilelang); so a step
runs everywhere a lab kernel runs, with the lab's inputs and checks.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from operator_runtime_testing.operators import OPERATORS, with_steps

ROOT = Path(__file__).resolve().parents[3]
# the operators whose chapters teach steps: those whose record names its production kernels
OPS = with_steps()
LANGS = ("cuda", "tilelang")
SUFFIX = {"cuda": ".cu", "tilelang": ".py"}
BACKEND = {"cuda": "nvidia", "tilelang": "tilelang"}  # the runtime backend that runs the production step
LABEL = {"cuda": "CUDA", "tilelang": "TileLang"}
# What the production kernel adds over the last step file: its title in the chapters' charts
# (each operator's record, operators/<op>.py).
PRODUCTION = {(op, lang): title for op in OPS for lang, title in OPERATORS[op].production.items()}
PRODUCTION_PATH = {"cuda": "ops/{op}/nvidia/{op}_cuda.cu", "tilelang": "ops/{op}/tilelang/{op}.py"}
_TITLE = re.compile(r'^(?://|"""|#)?\s*Step \d+:\s*(.*?)\.?\s*$')


@dataclass(frozen=True)
class Step:
    op: str
    lang: str
    number: int
    name: str      # the file's stem ("02_grid_stride"), or "production"
    title: str
    path: Path

    @property
    def production(self) -> bool:
        return self.name == "production"

    @property
    def key(self) -> str:
        """How the benchmark JSON names this step: "copy/cuda/02_grid_stride"."""
        return f"{self.op}/{self.lang}/{self.name}"

    @property
    def label(self) -> str:
        return f"{LABEL[self.lang]} {self.number}: {self.title}"

    def source(self) -> str:
        return self.path.read_text()

    def program(self):
        """A TileLang step's ``program(dtype, gpu)`` factory, from its file."""
        assert self.lang == "tilelang" and not self.production, self
        spec = importlib.util.spec_from_file_location(f"oprt_step_{self.op}_{self.name}", self.path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.program


def source(op: str, name: str) -> str:
    """The text of step file ``name`` of ``op`` (e.g. "01_one_per_thread.cu"), wherever the reader
    runs: a chapter executed by nbval runs from a temporary folder, not from book/ops/."""
    return (ROOT / "ops" / op / "steps" / name).read_text()


def title_of(path: Path) -> str:
    for line in path.read_text().splitlines()[:3]:
        found = _TITLE.match(line.strip())
        if found:
            return found.group(1).replace("``", "")  # plain text: titles go into charts and tables
    raise ValueError(f"{path}: a step file starts with a comment or docstring 'Step N: what it does.'")


def steps(op: str, lang: str | None = None, root: Path = ROOT) -> list[Step]:
    """``op``'s steps in order, for one language or both (CUDA first); production last in each."""
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, not {op!r}")
    found = []
    for language in ([lang] if lang else LANGS):
        files = sorted((root / "ops" / op / "steps").glob(f"[0-9][0-9]_*{SUFFIX[language]}"))
        for number, path in enumerate(files, 1):
            found.append(Step(op, language, number, path.stem, title_of(path), path))
        found.append(Step(op, language, len(files) + 1, "production", PRODUCTION[op, language],
                          root / PRODUCTION_PATH[language].format(op=op)))
    return found


def all_steps() -> list[Step]:
    return [s for op in OPS for s in steps(op)]


def check(step: Step, compile_for_gpu: bool = True) -> None:
    """The lab's correctness check for a step file (every lab input, the lab's judge): natively on
    a GPU; without one, CUDA through the CPU path and TileLang through its C target. The
    production step is the runtime's and is tested by tests/runtime/ops; here it is skipped."""
    from operator_course.lab import checks

    if step.production:
        return
    if step.lang == "cuda":
        checks.check_cuda(step.op, step.source(), own_launch=True, compile_for_gpu=compile_for_gpu)
    else:
        checks.check_tilelang(step.op, step.program(), name=f"TileLang step {step.number}")
