"""Build a student's CUDA kernel into a shared library and call it on torch tensors.

The student writes a templated ``__global__`` kernel; this file appends the fixed C entry
points (one per dtype: ``lab_<op>_f32``, ``_f16``, ``_bf16``) that launch it on the caller's
stream and return the CUDA error code, so every lab's kernel is called the same way, through
a C function, as the runtime's backends are. Libraries are cached by source hash.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import torch

from ..operators import OPERATORS, get

PREAMBLE = """#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
"""
# How each lab's kernel is launched, from each operator's record (operators/<op>.py, its CudaLab):
# (parameters, body). Element-wise kernels get a grid smaller than the data for large inputs (so
# they must loop, grid-stride); row kernels get one 256-thread block per row; matmul a block per
# 32x32 tile of C.
LAUNCHERS = {op: (r.cuda.params, f"if ({r.cuda.empty}) return 0;\n  {r.cuda.launch}") for op, r in OPERATORS.items()}
# A step kernel of a chapter (ops/<op>/steps/*.cu) brings its own launch: a host function
# ``launch<T>(inputs..., out, sizes..., stream)`` next to its kernel, since how the grid is sized is
# part of what each step teaches. The entry points (and so the calls) stay the lab's.
STEP_LAUNCHERS = {op: f"if ({r.cuda.empty}) return 0; launch<T>({r.cuda.casts}, (cudaStream_t)stream);"
                  for op, r in OPERATORS.items()}
SUFFIX = {torch.float32: ("f32", "float"), torch.float16: ("f16", "__half"), torch.bfloat16: ("bf16", "__nv_bfloat16")}
# Per user (never a shared /tmp folder another user could plant libraries in), by source hash.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "oprt-lab-cuda"
# The only functions a lab kernel's host code may import: CUDA's runtime (the launch stubs nvcc
# writes) and the C++ runtime's basics. Anything else (files, processes, syscalls, sockets) has no
# place in a lab kernel and could forge what the grader measures, so the library is refused.
ALLOWED_PREFIXES = ("__cuda", "cuda", "__cxa_", "_ITM_", "_Unwind_")
ALLOWED_IMPORTS = frozenset({"__gxx_personality_v0", "__gmon_start__", "atexit", "__stack_chk_fail", "memcpy",
                             "memset", "memmove", "abort", "__assert_fail"})
# x86 instructions that enter the kernel without going through an import
SYSCALL_INSTRUCTIONS = re.compile(r"\t(syscall|sysenter|int +\$0x80)\b")
# Host code that runs without being called (constructors, destructors, init sections) or beyond
# the C library (inline assembly): lab kernels need neither, and the grader cannot vouch for it.
FORBIDDEN_SOURCE = re.compile(r"\b(asm|__asm__|__asm|__attribute__)\b|\[\[\s*gnu::")


def sizes(op: str, inputs) -> list[ctypes.c_int64]:
    """The size arguments of ``op``'s entry point (LAUNCHERS' parameters after the pointers)."""
    return [ctypes.c_int64(v) for v in get(op).cuda_sizes(inputs)]


class NoCompiler(RuntimeError):
    pass


def full_source(op: str, student_source: str, own_launch: bool = False) -> str:
    """``own_launch``: the source defines ``launch<T>(...)`` (STEP_LAUNCHERS) instead of the lab's grid."""
    params, body = LAUNCHERS[op]
    body = STEP_LAUNCHERS[op] if own_launch else body
    entries = []
    for suffix, ctype in SUFFIX.values():
        entries.append(f'extern "C" int lab_{op}_{suffix}{params} {{\n  using T = {ctype};\n  {body}\n'
                       f"  return (int)cudaGetLastError();\n}}\n")
    # #line makes nvcc count the student's lines as their own: "CUDA_SOURCE(6): error: ..." is line
    # 6 of the string they wrote, not of this generated file
    return (PREAMBLE + '#line 1 "CUDA_SOURCE"\n' + student_source + '\n#line 1 "launcher_added_by_the_lab"\n'
            + "\n".join(entries))


def _nvcc() -> str:
    nvcc = shutil.which("nvcc") or next((str(p) for p in Path("/usr/local").glob("cuda*/bin/nvcc")), None)
    if not nvcc:
        raise NoCompiler("nvcc was not found: install the CUDA toolkit to build CUDA kernels")
    return nvcc


# (pattern in nvcc's first error, hint): the mistakes every class makes
NVCC_HINTS = [
    (r"__shfl_\w*_sync|no instance of overloaded function \"__shfl",
     "the warp shuffles take the mask of participating lanes first: __shfl_down_sync(0xffffffffu, value, offset)"),
    (r'expected a ";"', "a statement lacks its `;`: nvcc reports it at the line after (here, or the line above)"),
    (r"identifier \"(threadIdx|blockIdx|blockDim|gridDim)\w*\" is undefined|has no member \"[XYZ]\"",
     "the built-in indices are threadIdx.x, blockIdx.x, blockDim.x, gridDim.x (lower-case x, y, z)"),
    (r"identifier \"\w+\" is undefined", "a name is used before it is declared: check its spelling and scope"),
]


def _run_nvcc(args: list[str]) -> None:
    result = subprocess.run([_nvcc(), "-std=c++17", "-O3", *args], capture_output=True, text=True, timeout=600)
    if result.returncode:
        raise CompileError(explain_nvcc(result.stderr), result.stderr)


class CompileError(AssertionError):
    """nvcc's first error, whole, with a hint; ``full`` is everything nvcc said (for a toggle or a log)."""

    def __init__(self, text: str, full: str):
        super().__init__(text)
        self.full = full


DIAGNOSTIC = re.compile(r"^\S.*\(\d+\): (error|warning|note|remark)\b|^\d+ errors? detected")


def explain_nvcc(stderr: str) -> str:
    """The first error (its line of CUDA_SOURCE, the code and the caret), a hint for the mistakes
    every class makes, and how much more nvcc said: its notes list every overload it tried."""
    lines = stderr.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.search(r"\(\d+\): error", ln)), None)
    if start is None:
        return "nvcc could not compile the kernel:\n" + stderr[:20000]
    end = next((i for i in range(start + 1, len(lines)) if DIAGNOSTIC.match(lines[i])), len(lines))
    first = "\n".join(lines[start:end]).rstrip()
    hint = next((h for pattern, h in NVCC_HINTS if re.search(pattern, first)), None)
    rest = len([ln for ln in lines[end:] if ln.strip()])
    return ("nvcc could not compile the kernel (line numbers count the lines of CUDA_SOURCE):\n" + first
            + (f"\nHint: {hint}." if hint else "")
            + (f"\n({rest} more lines from nvcc: the toggle above in the notebook; the log when graded.)" if rest else ""))


def compile_check(op: str, student_source: str, arch: str = "sm_90", own_launch: bool = False) -> Path:
    """Compile to an object file for ``arch`` (no GPU needed): syntax, types and the kernel's
    signature are checked. Returns the object's path."""
    src = _write(op, student_source, own_launch)
    obj = src.with_suffix(f".{arch}.o")
    if not obj.exists():
        _run_nvcc([f"-arch={arch}", "-c", str(src), "-o", str(obj)])
    return obj


def build(op: str, student_source: str, own_launch: bool = False) -> "CudaLab":
    """Compile for this machine's GPU and load the library."""
    return CudaLab(op, ctypes.CDLL(str(build_library(op, student_source, own_launch))))


def build_library(op: str, student_source: str, own_launch: bool = False, capability: tuple | None = None) -> Path:
    """Compile for this machine's GPU (or ``capability``); the library's path (not loaded)."""
    major, minor = capability or torch.cuda.get_device_capability()
    src = _write(op, student_source, own_launch)
    lib = src.with_suffix(f".sm{major}{minor}.so")
    if not lib.exists():
        # cudart as a shared library: the kernel's library then imports only CUDA's launch
        # functions (a static cudart brings dlopen, sockets and files, see host_problems)
        cuda_lib = Path(_nvcc()).resolve().parents[1] / "lib64"
        _run_nvcc([f"-arch=sm_{major}{minor}", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                   "-Xlinker", f"-rpath={cuda_lib}", str(src), "-o", str(lib)])
    return lib


def host_problems(lib: Path, extra_allowed: re.Pattern | None = None) -> list[str]:
    """What the host code of a built library or object file may not do: import a function outside
    ALLOWED_* (or ``extra_allowed``, a pattern a whole name must match: the CPU build's object),
    or hold a system-call instruction. Empty for a clean lab kernel."""
    dynamic = ["-D"] if lib.suffix == ".so" else []  # an object file (no GPU here) lists them plainly
    result = subprocess.run(["nm", *dynamic, "--undefined-only", str(lib)], capture_output=True, text=True,
                            timeout=60)
    if result.returncode:
        raise RuntimeError(f"nm could not read {lib.name}: {result.stderr.strip()[:300]}")
    names = {line.split()[-1].split("@")[0] for line in result.stdout.splitlines() if line.strip()}
    bad = sorted(n for n in names if n not in ALLOWED_IMPORTS and not n.startswith(ALLOWED_PREFIXES)
                 and not (extra_allowed and extra_allowed.fullmatch(n)))
    problems = [f"calls {', '.join(bad)}"] if bad else []
    code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                          timeout=120)
    if code.returncode or SYSCALL_INSTRUCTIONS.search(code.stdout):
        problems.append("holds system-call instructions" if not code.returncode else "could not be disassembled")
    return problems


def _write(op: str, student_source: str, own_launch: bool = False) -> Path:
    found = FORBIDDEN_SOURCE.search(student_source)
    if found:
        line = student_source.count("\n", 0, found.start()) + 1
        raise AssertionError(f"line {line} of the CUDA source uses `{found.group(0)}`: lab kernels may not use "
                             "inline assembly or attributes (constructors, sections); plain CUDA C++ is enough")
    text = full_source(op, student_source, own_launch)
    CACHE.mkdir(parents=True, exist_ok=True)
    src = CACHE / f"{op}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.cu"
    if not src.exists():
        src.write_text(text)
    return src


class CudaLab:
    """The built library: ``run(*inputs) -> output``, on the current stream."""

    def __init__(self, op: str, lib: ctypes.CDLL, synchronize: bool = True):
        # synchronize=False: calls queue on the stream like any launch (for timing back to back)
        self.op, self.lib, self.synchronize = op, lib, synchronize

    def __call__(self, *inputs: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        x = inputs[0]
        fn = getattr(self.lib, f"lab_{self.op}_{SUFFIX[x.dtype][0]}")
        ptrs = [ctypes.c_void_p(t.data_ptr()) for t in (*inputs, out)]
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        code = fn(*ptrs, *sizes(self.op, inputs), stream)
        if code:
            raise AssertionError(f"the kernel launch failed: CUDA error {code}")
        if self.synchronize:
            torch.cuda.synchronize()  # surface an illegal address here, in the check that caused it
        return out
