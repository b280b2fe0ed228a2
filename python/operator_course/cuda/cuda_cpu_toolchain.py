"""The CPU build of a CUDA kernel (cuda_cpu.py): its compiler, flags, header and preamble. Apart
from cuda_cpu.py so that cuda_build.py's preprocessor pass and cache key read them without
importing the emulator (which imports cuda_build.py)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path


class NoCompiler(RuntimeError):
    """The compiler a build needs is not installed."""


HERE = Path(__file__).resolve().parent / "cuda_cpu_runtime"
INCLUDE = HERE / "include"
RUNTIME = HERE / "runtime.cpp"
# -O1: instrumented loads and stores stay in source order and lines stay exact; no -ffast-math
# (NaN and inf must behave as on the GPU); -fno-strict-aliasing: kernels cast to float4 and back.
# -fvisibility=hidden and -fno-gnu-unique: two students' libraries (or two versions of one) in one
# process must not share their __shared__ statics, which g++ would make process-wide unique symbols.
# -fno-jump-tables: a switch then makes no indirect jump, so that the student's object holds none
# (host_problems refuses calls and jumps through computed addresses in it).
STUDENT_FLAGS = ["-std=c++17", "-O1", "-g", "-fPIC", "-fno-strict-aliasing", "-fno-math-errno", "-fsanitize=thread",
                 "-fvisibility=hidden", "-fno-gnu-unique", "-fno-jump-tables",
                 "--param", "tsan-instrument-func-entry-exit=0", "-w"]
RUNTIME_FLAGS = ["-std=c++17", "-O2", "-g", "-fPIC", "-w"]
LINK_FLAGS = ["-shared", "-Wl,-Bsymbolic", "-Wl,-z,defs", "-lm", "-ldl", "-lpthread"]
PREAMBLE = '#include <cuda_on_cpu.h>\n'


def runtime_hash() -> str:
    """What a CPU build depends on besides the student's text: our header and runtime, and the flags."""
    h = hashlib.sha256()
    for path in sorted(HERE.rglob("*")):
        if path.is_file() and path.suffix in (".h", ".cpp"):
            h.update(path.name.encode() + path.read_bytes())
    h.update(" ".join(STUDENT_FLAGS + RUNTIME_FLAGS + LINK_FLAGS).encode())
    return h.hexdigest()[:12]


def gxx() -> str:
    found = os.environ.get("CXX_FOR_CUDA_CPU") or shutil.which("g++")
    if not found:
        raise NoCompiler("g++ was not found: install a C++ compiler to run CUDA kernels on the CPU")
    return found
