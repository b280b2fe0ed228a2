"""A lab's CUDA kernel on the CPU: the student's source, the same text nvcc compiles, built with
g++ against our header (cuda_cpu_runtime/include/cuda_on_cpu.h) and run on the lab's inputs, so a
laptop without a GPU (and a CPU grader) runs the kernel for real, and catches what a GPU hides.

How it runs. Every CUDA thread of a block is a fiber (runtime.cpp: a hand-written switch of the
callee-saved registers, no system call, so a block of 256 fibers costs microseconds); a fiber runs
until it reaches __syncthreads or a warp collective, where the others catch up: barriers and
shuffles have their CUDA semantics (warps of 32 in lockstep at each collective), everything in
between runs one thread at a time. Blocks run one after the other, with the launcher's own grid
and block shapes (cuda_build.LAUNCHERS, whose <<<...>>> launch is rewritten into a call of the
header's launch()).

How faults are caught, and why this way. A GPU hides reads past the end (they return whatever
lies there), writes past the end (into someone else's memory), a barrier some threads never reach
(a hang, or garbage), a shuffle naming a lane that has exited (undefined values), and races on
shared memory (right most of the time). Each needs the address of every load and store the kernel
makes, with the thread that made it. GCC hands us exactly that: the student's translation unit is
compiled with -fsanitize=thread but *not* linked with ThreadSanitizer, so the __tsan_read4/
__tsan_write4... calls GCC puts before each load and store land in our runtime, which knows the
current block and thread, the lab's buffers (with their guard regions, kernels.guarded) and the
library's static memory (where __shared__ variables live). That beats the alternatives:
AddressSanitizer must be the first library a process loads (not so in a notebook's Python), knows
nothing of blocks, threads or races, and makes a fault end the process; page guards catch only
one side of a buffer and no races; running each block under two interleavings finds races only
when they change the result. Here an access inside the guards is recorded (index, thread, line)
and is harmless, since the guards are the lab's memory; an access outside everything stops the
kernel before it happens. Everything runs in the calling process (ctypes), like the GPU path.

Shared memory that no thread wrote. A GPU's shared memory starts each block with garbage; here a
__shared__ variable is a static of the library, which holds zeros (or what the block before left),
so a tree reduction that reads slots only some threads stored passes by luck. The initcheck
(runtime.cpp) marks each byte of the __shared__ variables (found by the names the source declares
__shared__: shared_names, shared_ranges) when a thread of the block writes it, and reports a read
of bytes none wrote; __device__ variables and other statics are initialized as on a GPU and left
alone. memcpy, memset and memmove in a kernel count as the reads and writes they make (the
header's own versions: GCC instruments neither the C library's nor its inline expansion of them).

Speed: with cuda_cpu_profile on (CpuLab.profile), the runtime also counts, per static load/store
site of a lab buffer, the 32-byte sectors each warp instruction touches (the k-th execution of the
site by each lane of a warp: lanes are not in lockstep here), the global atomics by address, the
threads of each block that touched global memory and the longest thread's accesses; CpuLab.launches
records the grid a launcher gives a shape without running it. lab/estimate.py turns them into a
labelled estimate of an H200's speed, printed beside "performance: needs a GPU".

Lines: the source carries ``#line 1 "CUDA_SOURCE"`` before the student's text, as for nvcc; the
header's barrier and shuffle macros pass __LINE__, and the program counters of loads and stores
become lines through addr2line on the library (built with -g).

Containment: the student's object and our runtime are compiled separately; only the student's
object is checked against the grader's allowlist (cuda_build.host_problems), which for the CPU
build also admits the instrumentation calls, our runtime's functions and the C math library.
The runtime (asm for the switch, dl_iterate_phdr, pthread) is ours and never scanned as theirs.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import torch

from operator_runtime_testing.operators import OPERATORS
from . import cuda_build
from .cuda_cpu_toolchain import (HERE, INCLUDE, LINK_FLAGS, PREAMBLE, RUNTIME, RUNTIME_FLAGS, STUDENT_FLAGS,
                                 NoCompiler,
                                 gxx as _gxx, runtime_hash as _runtime_hash)

# What the student's object may import beyond cuda_build's allowlist: the calls the
# instrumentation inserts, our runtime's functions (namespace __cuda_cpu), C's math functions
# (device math runs on the host here), and the linker's own table.
CPU_ALLOWED = re.compile(
    r"__tsan_(read|write|unaligned_read|unaligned_write|volatile_read|volatile_write)(1|2|4|8|16)|"
    r"__tsan_(read_range|write_range|init|func_entry|func_exit|vptr_update|vptr_read)|"
    r"_ZN10__cuda_cpu\w+|_GLOBAL_OFFSET_TABLE_|__assert_fail|"
    r"(exp|exp2|expm1|exp10|log|log2|log10|log1p|pow|sqrt|cbrt|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|"
    r"asinh|acosh|atanh|erf|erfc|lgamma|tgamma|fmod|remainder|hypot|floor|ceil|round|trunc|rint|nearbyint|lrint|"
    r"lround|llrint|llround|fma|fmax|fmin|fabs|fdim|ldexp|frexp|modf|scalbn|ilogb|logb|copysign|nextafter|sincos)"
    r"f?")
# Lab names of the pointers each launcher passes, in order (the output last)
POINTERS = {op: r.cuda.pointers for op, r in OPERATORS.items()}
CHEVRONS = re.compile(r"([\w:]+(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\s*\((.*?)\);", re.S)
# <...>, not "...": a quoted name is looked for next to the unit first (the cache folder) before -I


def cpu_launcher(body: str) -> str:
    """A launcher's ``kernel<<<grid, block[, shared[, stream]]>>>(args);`` as the header's call."""
    return CHEVRONS.sub(lambda m: f"::__cuda_cpu::launch(::__cuda_cpu::Config({m.group(2)}), "
                                  f"[&]() {{ {m.group(1)}({m.group(3)}); }});", body)


def full_source(op: str, student_source: str, own_launch: bool = False) -> str:
    """The CPU build's translation unit: our header, the student's text numbered as CUDA_SOURCE,
    and the lab's C entry points (cuda_build's, launched through the header). ``own_launch``: a
    step kernel whose source launches itself (cuda_build.STEP_LAUNCHERS); its launches are rewritten too."""
    # fewer blocks than a GPU's launcher: a kernel must loop on the lab's own sizes (the runtime's grid_cap)
    params, body = cuda_build.launcher(op, f"::__cuda_cpu::grid_cap({cuda_build.OPERATORS[op].cuda.grid_cap})")
    traits, check = cuda_build.plain_kernel_guard(op, student_source)
    if own_launch:
        body, student_source = cuda_build.STEP_LAUNCHERS[op], cpu_launcher(student_source)
    else:
        body = check + "\n  " + body
    entries = [] if own_launch else [traits]
    for suffix, ctype in cuda_build.SUFFIX.values():
        entries.append(f'extern "C" __attribute__((visibility("default"))) int lab_{op}_{suffix}{params} {{\n  using T = {ctype};\n  {cpu_launcher(body)}\n'
                       f"  return (int)cudaGetLastError();\n}}\n")
    return (PREAMBLE + '#line 1 "CUDA_SOURCE"\n' + _one_static(student_source) + '\n#line 1 "launcher_added_by_the_lab"\n'
            + "\n".join(entries))


_STATIC_SPACE = re.compile(r"\bstatic(\s+)(__shared__|__constant__)\b|\b(__shared__|__constant__)(\s+)static\b")


def _one_static(source: str) -> str:
    """`static __shared__` and `static __constant__` (nvcc takes both) as the header can compile them: it
    spells those memory spaces `static`, which `static static` would repeat. Lines stay where they are."""
    return _STATIC_SPACE.sub(lambda m: (m.group(1) or m.group(4)) + (m.group(2) or m.group(3)), source)


def _compile(args: list[str], what: str) -> None:
    result = subprocess.run([_gxx(), *args], capture_output=True, text=True, timeout=600)
    if result.returncode:
        first = next((ln for ln in result.stderr.splitlines() if "error" in ln), "")
        raise AssertionError(f"the CPU build of the kernel ({what}) failed; nvcc accepted it, so this is a CUDA "
                             "feature the CPU path does not have (run it on a GPU):\n" + (first or result.stderr[-3000:]))


def _atomic(path: Path, make) -> Path:
    """``make(tmp)`` writes ``path`` under a temporary name, renamed into place when complete."""
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=path.suffix)
        os.close(fd)
        try:
            make(Path(tmp))
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return path


PREBUILT = "OPRT_CUDA_CPU_RUNTIME"  # the runtime's object compiled by a trusted process (the grader): its path


def runtime_object(folder: Path | None = None) -> Path:
    """Our runtime's object file: compiled into ``folder`` when given (the grader's own), else the one
    named by $OPRT_CUDA_CPU_RUNTIME when it is this runtime's (the grader compiles it once and shows it
    read-only to every sandbox, 4 s saved per build there), else compiled once into the cache."""
    name = f"cuda-cpu-runtime-{_runtime_hash()}.o"
    if folder is None:
        prebuilt = Path(os.environ.get(PREBUILT) or "/nonexistent")
        if prebuilt.name == name and prebuilt.is_file():
            return prebuilt
        folder = cuda_build.CACHE
        folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    return _atomic(path, lambda tmp: _compile([*RUNTIME_FLAGS, "-I", str(INCLUDE), "-c", str(RUNTIME), "-o", str(tmp)],
                                              "our runtime"))


def build_library(op: str, student_source: str, own_launch: bool = False,
                  check: bool = False) -> tuple[Path, Path]:
    """(the loadable library, the student's object file): built with g++, cached by source hash.
    ``check``: cuda_build.check_source first, on the text and on this build's preprocessing (build()
    does; the grader's runner checks through cuda_build.compile_check, which it calls first)."""
    text = full_source(op, student_source, own_launch)
    cuda_build.CACHE.mkdir(parents=True, exist_ok=True)
    stem = cuda_build.CACHE / f"{op}-{hashlib.sha256((text + _runtime_hash()).encode()).hexdigest()[:16]}.cpu"

    def unit() -> Path:
        return _atomic(stem.with_suffix(".cpu.cc"), lambda tmp: tmp.write_text(text))

    src = cuda_build.checked_unit(student_source, unit, ("cpu",)) if check else unit()
    obj = _atomic(stem.with_suffix(".cpu.o"), lambda tmp: _compile(
        [*STUDENT_FLAGS, "-I", str(INCLUDE), "-x", "c++", "-c", str(src), "-o", str(tmp)], "g++"))
    runtime = runtime_object()
    lib = _atomic(stem.with_suffix(".cpu.so"), lambda tmp: _compile(
        [str(obj), str(runtime), "-o", str(tmp), *LINK_FLAGS], "linking"))
    return lib, obj


UNINITIALIZED = re.compile(r"^CUDA_SOURCE:(\d+):\d+: warning: \S([A-Za-z_]\w*)\S (?:may be|is) used uninitialized",
                           re.M)


def uninitialized_reads(op: str, student_source: str, own_launch: bool = False) -> list[tuple[int, str]]:
    """(line of CUDA_SOURCE, name) for each local variable g++ finds read before it has a value
    (-Wuninitialized and -Wmaybe-uninitialized at the build's -O1, without ThreadSanitizer's
    instrumentation). For a hint when a kernel's results are wrong: "may be" is g++'s guess, no verdict."""
    flags = [f for f in STUDENT_FLAGS if f not in ("-w", "-fsanitize=thread", "--param",
                                                    "tsan-instrument-func-entry-exit=0")]
    with tempfile.TemporaryDirectory() as tmp:
        unit = Path(tmp) / "unit.cc"
        unit.write_text(full_source(op, student_source, own_launch))
        result = subprocess.run([_gxx(), *flags, "-Wuninitialized", "-Wmaybe-uninitialized", "-I", str(INCLUDE),
                                 "-x", "c++", "-c", str(unit), "-o", os.devnull], capture_output=True, text=True,
                                timeout=300)
    return list(dict.fromkeys((int(line), name) for line, name in UNINITIALIZED.findall(result.stderr)))


def host_problems(obj: Path) -> list[str]:
    """cuda_build.host_problems for the student's object of the CPU build: its imports, no code run
    at load beyond GCC's ThreadSanitizer constructor (cuda_build.TOOLCHAIN_STARTUP), and no call or
    jump through a computed address (the kernel runs here as host code)."""
    return cuda_build.host_problems(obj, extra_allowed=CPU_ALLOWED, indirect=False)


def build(op: str, student_source: str, own_launch: bool = False) -> "CpuLab":
    """Check the source (cuda_build.check_source), build it and load it."""
    lib, _ = build_library(op, student_source, own_launch, check=True)
    return CpuLab(op, lib, student_source)


def shared_names(source: str) -> set[str]:
    """The names ``source`` declares __shared__: `__shared__ __align__(16) float a[32][33], b;` -> a, b
    (the last name before each declarator's `[`, `,`, `;`, `=` or `{` outside parentheses). A
    __shared__ spelled through a macro of the student's is not seen: its variable is then not checked. A
    parenthesized name, `__shared__ float (total);`, is the name."""
    tokens = [t for t in cuda_build._lex(source) if t.kind != "nl"]
    collapsed = True
    while collapsed:  # ( name ) -> name, so that the declarator's name is the last before its `;`
        collapsed = False
        for k in range(len(tokens) - 2):
            if tokens[k].text == "(" and tokens[k + 1].kind == "id" and tokens[k + 2].text == ")":
                tokens[k:k + 3] = [tokens[k + 1]]
                collapsed = True
                break
    names: set[str] = set()
    for k, t in enumerate(tokens):
        if t.kind != "id" or t.text != "__shared__":
            continue
        depth, last, named = 0, None, False
        for u in tokens[k + 1:]:
            if u.text == "#":
                break
            if depth == 0 and u.text in ("[", "{", ";", ",", "=") and last and not named:
                names.add(last)
                named = True
            if u.text in ("(", "[", "{"):
                depth += 1
            elif u.text in (")", "]", "}"):
                depth -= 1
                if depth < 0:
                    break
            elif depth == 0 and u.text == ";":
                break
            elif depth == 0 and u.text == ",":
                last, named = None, False
            elif depth == 0 and u.kind == "id" and not named:
                last = u.text
    return names


def shared_ranges(lib: Path, names: set[str]) -> list[tuple[int, int]]:
    """(offset in the library, bytes) of each static variable of ``lib`` named one of ``names`` (function-local
    statics too: `reduce_sum_kernel<float>(...)::partial`), by its symbol table. Not every function-local
    static: a kernel's `static __device__` counter is global memory, set before the launch."""
    if not names:
        return []
    result = subprocess.run(["nm", "-C", "-S", "--defined-only", str(lib)], capture_output=True, text=True, timeout=60)
    ranges = []
    for ln in result.stdout.splitlines():
        parts = ln.split(maxsplit=3)
        if (len(parts) == 4 and len(parts[2]) == 1 and parts[2] in "bBdD" and not parts[3].startswith("guard variable")
                and parts[3].split("::")[-1] in names):
            ranges.append((int(parts[0], 16), int(parts[1], 16)))
    return ranges


class CpuLab:
    """The CPU build, loaded: ``run(inputs, out, label)`` runs the kernel through the lab's C entry
    point and raises AssertionError (its first line ``label``) when the run found a fault.
    ``source``: the student's text, for the names it declares __shared__ (the initcheck watches
    those variables); without it, the translation unit build_library left beside the library."""

    def __init__(self, op: str, lib: Path, source: str | None = None):
        self.op, self.path = op, Path(lib)
        self.lib = ctypes.CDLL(str(lib))
        self.lib.cuda_cpu_report.restype = ctypes.c_char_p
        self.lib.cuda_cpu_begin.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_ulonglong)]
        self.lib.cuda_cpu_shared.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_ulonglong)]
        self.lib.cuda_cpu_profile.argtypes = [ctypes.c_int]
        self.lib.cuda_cpu_profile_report.restype = ctypes.c_char_p
        if source is None:
            unit = self.path.with_suffix(".cc")
            source = unit.read_text() if unit.exists() else ""
        ranges = shared_ranges(self.path, shared_names(source))
        flat = [v for r in ranges for v in r]
        self.lib.cuda_cpu_shared(len(ranges), (ctypes.c_ulonglong * max(len(flat), 1))(*flat))

    def run(self, inputs: list[torch.Tensor], out: torch.Tensor, label: str) -> torch.Tensor:
        tensors = [*inputs, out]
        assert all(t.device.type == "cpu" and t.is_contiguous() for t in tensors)
        desc, pointers = [], []
        for t in tensors:
            storage = t.untyped_storage()
            # an empty tensor's data_ptr() is 0: hand the kernel its place in the guarded buffer instead, so
            # that reading x[0] of an empty x is reported as one element past its end, not as a wild address
            pointers.append(storage.data_ptr() + t.storage_offset() * t.element_size())
            desc += [pointers[-1], t.numel() * t.element_size(), storage.data_ptr(), storage.nbytes(), t.element_size()]
        self.lib.cuda_cpu_begin(len(tensors), (ctypes.c_ulonglong * len(desc))(*desc))
        fn = getattr(self.lib, f"lab_{self.op}_{cuda_build.SUFFIX[inputs[0].dtype][0]}")
        code = fn(*[ctypes.c_void_p(p) for p in pointers], *cuda_build.sizes(self.op, inputs), ctypes.c_void_p(0))
        report = self.lib.cuda_cpu_report().decode(errors="replace")
        if report.strip():
            raise AssertionError(f"{label}: " + describe(report, self.path, self.op, tensors))
        if code:
            raise AssertionError(f"the kernel launch failed: CUDA error {code}")
        return out

    # ---- the speed estimate's counters (runtime.cpp: cuda_cpu_profile; lab/estimate.py reads them) ----

    def profile(self, inputs: list[torch.Tensor], out: torch.Tensor, label: str) -> str:
        """``run`` with the counters on: the runtime's records of the run, one a line (key=value|...):
        totals (blocks, threads active, accesses, the longest thread's), each launch, each load/store
        site (its warp instructions' sectors and bytes), the atomics by address."""
        self.lib.cuda_cpu_profile(1)
        try:
            self.run(inputs, out, label)
            return self.lib.cuda_cpu_profile_report().decode()
        finally:
            self.lib.cuda_cpu_profile(0)

    def launches(self, inputs: list[torch.Tensor]) -> str:
        """The launches (grid, block) the lab's entry point makes for inputs of these shapes, recorded
        and not run: ``inputs`` may be meta tensors, the kernel gets no memory."""
        fn = getattr(self.lib, f"lab_{self.op}_{cuda_build.SUFFIX[torch.float32][0]}")
        self.lib.cuda_cpu_profile(2)
        try:
            fn(*[ctypes.c_void_p(0)] * (len(inputs) + 1), *cuda_build.sizes(self.op, inputs), ctypes.c_void_p(0))
            return self.lib.cuda_cpu_profile_report().decode()
        finally:
            self.lib.cuda_cpu_profile(0)


# ---- the report, in words ----

def _fields(line: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in line.split("|") if "=" in item)


def _triple(text: str) -> str:
    return f"({text})"


def _lines(lib: Path, offsets: list[int]) -> dict[int, str]:
    """program counter offset -> 'line N' of CUDA_SOURCE (or where it is, when outside it)."""
    offsets = sorted({o for o in offsets if o > 0})
    if not offsets:
        return {}
    result = subprocess.run(["addr2line", "-e", str(lib), "-i", "-a", *[hex(o - 1) for o in offsets]],
                            capture_output=True, text=True, timeout=60)
    found, current, chain = {}, None, {}
    for ln in result.stdout.splitlines():
        if ln.startswith("0x"):
            current = int(ln, 16) + 1
            chain[current] = []
        elif current is not None:
            chain[current].append(ln.split(" (discriminator")[0].strip())
    for off, places in chain.items():
        mine = [p.rsplit("/", 1)[-1] for p in places if p.rsplit("/", 1)[-1].startswith("CUDA_SOURCE:")]
        found[off] = f"line {mine[0].split(':')[1]}" if mine else (places[0] if places else "an unknown line")
    return found


def _variable(lib: Path, offset: int, size: int, dynamic: bool) -> str:
    """The shared variable (and element) at ``offset`` in the library, by its symbol table."""
    if dynamic:
        return f"the dynamic shared memory (byte {offset})"
    result = subprocess.run(["nm", "-C", "-S", "--defined-only", str(lib)], capture_output=True, text=True, timeout=60)
    for ln in result.stdout.splitlines():
        parts = ln.split(maxsplit=3)
        if len(parts) == 4 and parts[2] in "bBdDuV" and len(parts[2]) == 1:
            start, extent = int(parts[0], 16), int(parts[1], 16)
            if start <= offset < start + extent:
                name, byte = parts[3].split("::")[-1], offset - start
                if extent == size and byte == 0:
                    return name  # a scalar
                return f"{name}[{byte // size}]" if size in (1, 2, 4, 8) and byte % size == 0 else f"{name} (byte {byte})"
    return "a shared or static variable"


KINDS = {
    "oob": "out-of-bounds {rw}", "race": "data race on shared memory", "wild": "out-of-bounds {rw} (wild address)",
    "barrier_exit": "__syncthreads not reached by every thread", "barrier_divergence": "divergent __syncthreads",
    "shfl_exited": "shuffle mask names an exited thread", "shfl_waits": "warp collective deadlock",
    "shfl_self": "shuffle mask without the calling lane", "shfl_beyond": "shuffle mask names lanes the block lacks",
    "shfl_width": "shuffle width is not a power of 2", "shfl_mismatch": "lanes meet at different warp collectives",
    "shfl_source": "shuffle reads a lane outside its mask", "trap": "__trap", "assert": "assertion failed",
    "double_write": "two threads write one output element",
    "input_write": "write into an input",
    "cross_read": "read of an output element another block wrote",
    "untracked": "too much shared or __device__ memory between two barriers to check",
    "uninit": "read of shared memory no thread wrote",
    "cas_once": "atomicCAS not retried",
}
HINTS = {
    "cas_once": "an atomicCAS update must retry until it succeeds: `old = *p; do { assumed = old; old = atomicCAS(p, "
                "assumed, new_value(assumed)); } while (old != assumed);` (or use atomicAdd where one exists)",
    "race": "put a __syncthreads() between the threads' writes to shared memory and the other threads' reads "
            "(and between the reads and the next writes)",
    "barrier_exit": "every thread of the block must reach each __syncthreads: take it out of the branch (or the "
                    "early return), and let the threads with nothing to do skip only the work",
    "barrier_divergence": "every thread of the block must reach the same __syncthreads: take it out of the if/else",
    "shfl_exited": "the mask names the lanes that execute the shuffle together: a lane that returned early or "
                   "skipped the branch must not be in it (keep every lane in the loop, or compute the mask with "
                   "__ballot_sync before the branch)",
    "shfl_waits": "the mask names the lanes that execute the shuffle together: they must all reach it",
    "shfl_self": "the mask must include the calling lane: 0xffffffffu when the whole warp shuffles",
    "shfl_beyond": "the block has fewer threads than the mask names",
    "shfl_width": "width must be a power of 2 up to 32 (leave it out for the whole warp)",
    "shfl_mismatch": "the lanes of a mask must meet at the same shuffle, with the same mask",
    "shfl_source": "a lane may only read lanes named in the mask: widen the mask, or keep the offset inside it",
    "double_write": "each output element needs exactly one thread: a grid-stride loop steps by all the elements the "
                    "whole grid covers in one round, i += (int64_t)gridDim.x * blockDim.x when each thread takes one "
                    "(times UNROLL when each takes UNROLL), so that no two threads meet",
    "atomic_after_store": "store the output's starting value before any thread adds into it, with a __syncthreads() "
                          "between (only threads of one block can be ordered so), or add the block's partials in "
                          "registers or shared memory and store the result once",
    "input_write": "the inputs are read-only (the launcher passes them as const T*): keep partial results in "
                   "registers or shared memory and combine them there (or with atomicAdd on the output), never in "
                   "an input",
    "cross_read": "a block may read only what it wrote itself (or its inputs): combine blocks' results with "
                  "atomicAdd, or in a second kernel",
    "early_read": "to combine every block's partial in one block, let the last block to arrive do it: each block "
                  "stores its partial, calls __threadfence(), then takes a ticket (`last = atomicInc(&arrived, "
                  "gridDim.x - 1) == gridDim.x - 1`); blockIdx.x == gridDim.x - 1 names the grid's last block, which "
                  "may run first. Or use atomicAdd on the output, or a second kernel",
    "untracked": "keep large tables out of __device__ memory and stage shared memory a tile at a time, with a "
                 "__syncthreads() between tiles",
    "uninit": "each element of shared memory a thread reads must first be stored by a thread of the block (with a "
              "__syncthreads() between the store and another thread's read): have every thread store, a neutral "
              "value where it has no data (`sdata[tid] = i < n ? x[i] : 0`, not `if (i < n) sdata[tid] = x[i]`), or "
              "keep the reads to the elements that were stored; and store a partial result in shared memory before "
              "it is read back",
}

def _op_hint(op: str, situation: str, default: str) -> str:
    """The operator's own words for a fault (its record's hints[situation]["cuda"]: a matmul thread owns
    a (row, col) of C, not a grid-stride index; attention's loads run past the last key), else the default."""
    from operator_runtime_testing.operators import get

    return get(op).hints.get(situation, {}).get("cuda", default)


def describe(report: str, lib: Path, op: str, tensors: list[torch.Tensor]) -> str:
    """The runtime's report in words: each fault's kind, block, thread and line, then hints."""
    from operator_course.lab.judge import HINTS as JUDGE_HINTS

    records = [_fields(ln) for ln in report.splitlines() if ln.strip()]
    counts = {(r.get("buf"), r.get("rw"), next((k for k in ("race", "double", "uninit", "input") if k in r), None)): int(r["count"])
              for r in records if r.get("kind") == "count"}
    faults = [r for r in records if r.get("kind") != "count"]
    lines = _lines(lib, [int(r[k]) for r in faults for k in ("pc", "other_pc") if k in r])
    names = POINTERS[op]
    out_lines, hints = [], []
    order = {"oob": 1, "race": 2, "uninit": 3}
    faults.sort(key=lambda r: (order.get(r["kind"], 0), r.get("rw") != "write"))
    for r in faults:
        kind = r["kind"]
        title = KINDS.get(kind, kind).format(rw=r.get("rw", "access"))
        who = f"thread {_triple(r['thread'])} of block {_triple(r['block'])}"
        line = lines.get(int(r["pc"]), "an unknown line") if "pc" in r else f"line {r.get('line', '?')}"
        if kind == "oob":
            b = int(r["buf"])
            t, name = tensors[b], names[b] if b < len(names) else f"buffer {b}"
            n, index = t.numel(), int(r["index"])
            role = "the output" if b == len(tensors) - 1 else f"the input {name}"
            verb = "writes" if r["rw"] == "write" else "reads"
            side = (f"{index - n + 1} element(s) past the end of {role}" if index >= n
                    else f"{-index} element(s) before the start of {role}")
            more = counts.get((r["buf"], r["rw"], None), 1)
            out_lines.append(f"{title}: {who} {verb} {name}[{index}] at CUDA_SOURCE {line}, {side} ({name} has "
                             f"{n} element{'s' * (n != 1)}){f'; {more} such accesses in all' if more > 1 else ''}.")
            default = _op_hint(op, "past_end", JUDGE_HINTS["past_end"]["cuda"])
            if r["rw"] == "read":  # the operator's words for this input (attention's query rows), else for any read
                default = _op_hint(op, f"past_end_read_{name}", _op_hint(op, "past_end_read", default))
            hints.append(default)
        elif kind == "double_write" and "atomic" in r:
            b = int(r["buf"])
            out_lines.append(f"{title}: {who} adds into {names[b]}[{r['index']}] with an atomic at CUDA_SOURCE {line}, "
                             f"which thread {_triple(r['other_thread'])} of block {_triple(r['other_block'])} stored "
                             "with nothing ordering the two: on a GPU the atomics may land before that store, which "
                             "wipes them.")
            hints.append(HINTS["atomic_after_store"])
        elif kind == "double_write":
            b = int(r["buf"])
            more = counts.get((None, None, "double"), 1)
            out_lines.append(f"{title}: {who} writes {names[b]}[{r['index']}] at CUDA_SOURCE {line}, which thread "
                             f"{_triple(r['other_thread'])} of block {_triple(r['other_block'])} wrote too: on a GPU "
                             f"either write may land last{f' ({more} such writes in all)' if more > 1 else ''}.")
            hints.append(_op_hint(op, kind, HINTS[kind]))
        elif kind == "input_write":
            b = int(r["buf"])
            more = counts.get((None, None, "input"), 1)
            out_lines.append(f"{title}: {who} writes {names[b]}[{r['index']}] at CUDA_SOURCE {line}, an element of the "
                             f"input {names[b]}: on a GPU the threads that update it at once lose each other's updates, "
                             f"and the caller's tensor is changed{f' ({more} such writes in all)' if more > 1 else ''}.")
            hints.append(HINTS[kind])
        elif kind == "cross_read" and "early" in r:
            var = _variable(lib, int(r["addr"]), int(r.get("size", 1)), False)
            out_lines.append(f"read of a __device__ variable before another block wrote it: {who} reads {var} at "
                             f"CUDA_SOURCE {line}, which block {_triple(r['later_block'])} wrote later in this launch: "
                             "on a GPU blocks run in any order (and at once), so the read got whatever was there "
                             "before. (Here the blocks after the first that writes __device__ memory run in a random "
                             "order: the grid's last block is not the last to run.)")
            hints.append(HINTS["early_read"])
        elif kind == "cross_read" and "device" in r:
            var = _variable(lib, int(r["addr"]), int(r.get("size", 1)), False)
            out_lines.append(f"read of a __device__ variable another block wrote: {who} reads {var} at CUDA_SOURCE {line}, "
                             f"which block {_triple(r['other_block'])} wrote in this launch: on a GPU blocks run in any "
                             "order, so that block may not have written it yet (here blocks run one after another, and "
                             "it always has)." + (" This block took an atomic ticket, but it is not the last block to "
                                                 "run (here the blocks after the first that writes __device__ memory "
                                                 "run in a random order)." if "ticket" in r else ""))
            hints.append(HINTS["early_read" if "ticket" in r else kind])
        elif kind == "cross_read":
            b = int(r["buf"])
            out_lines.append(f"{title}: {who} reads {names[b]}[{r['index']}] at CUDA_SOURCE {line}, which block "
                             f"{_triple(r['other_block'])} wrote: on a GPU blocks run in any order, so that block may "
                             "not have written it yet (here blocks run one after another, and it always has).")
            hints.append(HINTS[kind])
        elif kind == "untracked" and "device" in r:
            out_lines.append(f"{title}: {who} at CUDA_SOURCE {line} wrote more than {r['bytes']} distinct bytes of "
                             "__device__ memory in one launch, past what the CPU check follows for reads across blocks; "
                             "a lab kernel needs a few words there at most.")
            hints.append(HINTS[kind])
        elif kind == "untracked":
            out_lines.append(f"{title}: {who} at CUDA_SOURCE {line} touched more than {r['bytes']} distinct bytes of "
                             "__shared__ or __device__ memory since the last __syncthreads(), past what the CPU check "
                             "follows for races; a lab kernel needs far less (a tile of shared memory per block).")
            hints.append(HINTS[kind])
        elif kind == "cas_once":
            out_lines.append(f"{title}: {who} called atomicCAS at CUDA_SOURCE line {r['line']}, which found the value changed by "
                             "another thread's update (on a GPU threads that update one address at once make all but "
                             "one CAS fail, a thread as often as there are threads before it; here a contended CAS fails "
                             "1 to 32 times) and the thread went on without trying again until one succeeded: its "
                             "update is lost.")
            hints.append(HINTS[kind])
        elif kind == "wild":
            verb = "writes" if r["rw"] == "write" else "reads"
            b = int(r.get("near", 0))
            name = names[b] if b < len(names) else f"buffer {b}"
            out_lines.append(f"{title}: {who} {verb} at CUDA_SOURCE {line} an address outside every buffer it was "
                             f"given (as far as {name}[{r.get('index')}], {name} has {tensors[b].numel()} elements); "
                             "the kernel was stopped there.")
            hints.append(JUDGE_HINTS["past_end"]["cuda"])
        elif kind == "race":
            other_line = lines.get(int(r["other_pc"]), "an unknown line")
            var = _variable(lib, int(r["addr"]), int(r.get("size", 1)), "dynamic" in r)
            more = counts.get((None, None, "race"), 1)
            out_lines.append(f"{title}: {who} {r['rw']}s {var} at CUDA_SOURCE {line}, and thread "
                             f"{_triple(r['other_thread'])} {'wrote' if r['other_rw'] == 'write' else 'read'} it at "
                             f"CUDA_SOURCE {other_line} with no __syncthreads() between them: on a GPU either may come "
                             f"first{f' ({more} racing accesses in all)' if more > 1 else ''}.")
            hints.append(HINTS["race"])
        elif kind == "uninit":
            var = _variable(lib, int(r["addr"]), int(r.get("size", 1)), "dynamic" in r)
            more = counts.get((None, None, "uninit"), 1)
            out_lines.append(f"{title}: {who} reads {var} at CUDA_SOURCE {line}, which no thread of the block wrote: "
                             "on a GPU it holds garbage (whatever an earlier block or kernel left there), so the result "
                             f"is right only by luck{f' ({more} such reads in all)' if more > 1 else ''}.")
            hints.append(HINTS["uninit"])
        elif kind in ("barrier_exit", "barrier_divergence"):
            other = f"thread {_triple(r['other_thread'])}"
            if kind == "barrier_exit":
                tail = (f"{other} exited without reaching it" if "exited" in r else
                        f"{other} waits at {r.get('at_collective')} at CUDA_SOURCE line {r.get('at_line')}")
            else:
                tail = f"{other} waits at the __syncthreads at CUDA_SOURCE line {r['other_line']}"
            out_lines.append(f"{title}: {who} waits at the __syncthreads at CUDA_SOURCE {line}, but {tail} "
                             "(on a GPU the block hangs or goes on with garbage).")
            hints.append(HINTS[kind])
        elif kind.startswith("shfl"):
            mask = f"0x{int(r.get('mask', 0)):08x}"
            op_name = r.get("op", "the shuffle")
            if kind in ("shfl_exited", "shfl_waits"):
                other = f"lane {r['lane']} (thread {_triple(r['other_thread'])})"
                state = ("has exited" if kind == "shfl_exited" or "exited" in r
                         else f"waits at the __syncthreads at CUDA_SOURCE line {r['at_barrier']}" if "at_barrier" in r
                         else f"waits at {r.get('at_collective')} at CUDA_SOURCE line {r.get('at_line')}")
                text = f"{who} calls {op_name} at CUDA_SOURCE {line} with mask {mask}, which names {other}; it {state}"
            elif kind == "shfl_self":
                text = f"{who} calls {op_name} at CUDA_SOURCE {line} with mask {mask}, which leaves out its own lane {r['lane']}"
            elif kind == "shfl_width":
                text = f"{who} calls {op_name} at CUDA_SOURCE {line} with width {r['width']}"
            elif kind == "shfl_source":
                text = (f"{who} (lane {r['lane']}) calls {op_name} at CUDA_SOURCE {line} with mask {mask} and reads "
                        f"lane {r['src']}, which is not in the mask: its value is undefined")
            elif kind == "shfl_mismatch":
                text = (f"{who} calls {op_name} at CUDA_SOURCE {line} (mask {mask}), while thread "
                        f"{_triple(r['other_thread'])} of its warp is at {r['other_op']} at CUDA_SOURCE line "
                        f"{r['other_line']} (mask 0x{int(r['other_mask']):08x})")
            else:
                text = f"{who} calls {op_name} at CUDA_SOURCE {line} with mask {mask}, naming lanes beyond the block's {r.get('lanes')}"
            out_lines.append(f"{title}: {text}.")
            hints.append(HINTS[kind])
        elif kind == "assert":
            out_lines.append(f"{title}: {who} at CUDA_SOURCE {line}: `{r.get('expr', '')}`.")
        else:
            out_lines.append(f"{title}: {who} at CUDA_SOURCE {line}.")
    text = "the CPU run of the kernel found what a GPU would hide:\n" + "\n".join(f"- {ln}" for ln in out_lines)
    hints = list(dict.fromkeys(hints))
    return text + "".join(f"\nHint: {h}." for h in hints)
