"""The CPU path of the labs' CUDA kernels (cuda/cuda_cpu.py): every lab's CUDA solution passes
on it, and a catalogue of broken kernels (tests/labs/cuda_faults/, one file each) is caught with
the kind of fault, the block and thread, and the line of CUDA_SOURCE. Each file's header:

    # what: the kernel and its fault
    # check: cuda <op>
    # says: fragment | fragment ...     (each in the message; `passed` for a correct kernel)

The path is forced (torch.cuda.is_available() patched to False), so a GPU machine tests it too.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
import torch

from labs.solutions import cuda_solutions
from operator_course import lab
from operator_course.cuda import cuda_build, cuda_cpu
from operator_runtime_testing.operators import OPERATORS

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "tests" / "labs" / "cuda_faults"
HEADER = re.compile(r"^# (what|check|says): ?(.*)$")

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the CPU path builds kernels with g++")


def parse(path: Path) -> dict:
    spec, lines = {}, path.read_text().splitlines()
    while lines and HEADER.match(lines[0]):
        key, value = HEADER.match(lines.pop(0)).groups()
        spec[key] = value.strip()
    spec["op"] = spec["check"].split()[1]
    spec["says"] = [s.strip() for s in spec["says"].split(" | ")]
    namespace: dict = {}
    exec("\n".join(lines), namespace)
    spec["source"] = namespace["CUDA_SOURCE"]
    return spec


FAULTS = {p.stem: parse(p) for p in sorted(FOLDER.glob("*.py"))}


def solutions() -> dict[str, str]:
    return cuda_solutions()


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def test_the_catalogue_holds_the_faults_the_issue_names():
    kinds = " ".join(s["says"][0] for s in FAULTS.values())
    for kind in ("out-of-bounds read", "out-of-bounds write", "shuffle reads a lane outside its mask", "data race on shared memory",
                 "shuffle width", "shuffle mask names an exited thread",
                 "__syncthreads not reached by every thread", "two threads write one output element",
                 "read of shared memory no thread wrote", "passed"):
        assert kind in kinds, kind


@pytest.mark.parametrize("op", list(OPERATORS))
def test_every_lab_solution_passes_on_the_cpu(op, no_gpu, capsys):
    start = time.perf_counter()
    lab.check_cuda(op, solutions()[op])
    out = capsys.readouterr().out
    assert f"{op} (CUDA): passed" in out, out
    print(f"{op}: {time.perf_counter() - start:.1f} s")


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_each_fault_is_caught_with_kind_block_thread_and_line(name, no_gpu, capsys):
    spec = FAULTS[name]
    if spec["says"] == ["passed"]:
        lab.check_cuda(spec["op"], spec["source"])
        assert f"{spec['op']} (CUDA): passed" in capsys.readouterr().out
        return
    with pytest.raises(AssertionError) as e:
        lab.check_cuda(spec["op"], spec["source"])
    missing = [s for s in spec["says"] if s not in str(e.value)]
    assert not missing, f"{name}: the message lacks {missing}:\n{e.value}"


def test_the_launchers_chevrons_become_the_headers_launch():
    for op, (_, body) in cuda_build.LAUNCHERS.items():
        cpu = cuda_cpu.cpu_launcher(body)
        assert "<<<" not in cpu and "::__cuda_cpu::launch(::__cuda_cpu::Config(" in cpu, op


def test_the_students_object_passes_the_allowlist_and_a_system_call_does_not():
    clean = solutions()["softmax"]
    assert cuda_cpu.host_problems(cuda_cpu.build_library("softmax", clean)[1]) == []
    sneaky = clean.replace("template <typename T>", '#include <cstdlib>\nstatic int on = std::system("true");\n'
                           "template <typename T>", 1)
    problems = cuda_cpu.host_problems(cuda_cpu.build_library("softmax", sneaky)[1])
    assert problems and "system" in problems[0]
