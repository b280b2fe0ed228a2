"""Build a student's CUDA kernel into a shared library and call it on torch tensors.

The student writes a templated ``__global__`` kernel; this file appends the fixed C entry
points (one per dtype: ``lab_<op>_f32``, ``_f16``, ``_bf16``) that launch it on the caller's
stream and return the CUDA error code, so every lab's kernel is called the same way, through
a C function, as the runtime's backends are. Libraries are cached by source hash.
"""

from __future__ import annotations

import bisect
import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import torch

from operator_runtime_testing.operators import OPERATORS, get
from operator_course.lab.starter import not_written

from . import cuda_cpu_toolchain as cpu_toolchain
from .cuda_cpu_toolchain import NoCompiler  # noqa: F401  (callers catch cuda_build.NoCompiler)

PREAMBLE = """#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
"""
# How each lab's kernel is launched, from each operator's record (operators/<op>.py, its CudaLab):
# (parameters, body). Element-wise kernels get a grid smaller than the data for large inputs (so
# they must loop, grid-stride); row kernels get one 256-thread block per row; matmul a block per
# 32x32 tile of C.
def launcher(op: str, grid_cap: str | None = None) -> tuple[str, str]:
    """(parameters, body) of ``op``'s entry point; ``grid_cap``: the C expression for the most blocks an
    element-wise launcher starts (default: the record's number, a GPU's)."""
    r = OPERATORS[op].cuda
    return r.params, f"if ({r.empty}) return 0;\n  " + r.launch.replace("GRID_CAP", grid_cap or str(r.grid_cap))


LAUNCHERS = {op: launcher(op) for op in OPERATORS}
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
# exit: nvcc's host stub of a non-inline __device__ function calls it (it can only end the job)
ALLOWED_IMPORTS = frozenset({"__gxx_personality_v0", "__gmon_start__", "atexit", "__stack_chk_fail", "memcpy",
                             "memset", "memmove", "abort", "__assert_fail", "exit"})
# x86 instructions that enter the kernel without going through an import
SYSCALL_INSTRUCTIONS = re.compile(r"\t(syscall|sysenter|int +\$0x80)\b")
# Calls and jumps through a register or memory: none in a clean lab kernel's CPU object (its calls
# are direct or through the PLT; the CPU build has no jump tables, cuda_cpu_toolchain.STUDENT_FLAGS)
INDIRECT_INSTRUCTIONS = re.compile(r"\t(?:notrack +|bnd +)*(?:call|jmp)q? +\*")


def sizes(op: str, inputs) -> list[ctypes.c_int64]:
    """The size arguments of ``op``'s entry point (LAUNCHERS' parameters after the pointers)."""
    return [ctypes.c_int64(v) for v in get(op).cuda_sizes(inputs)]


# The one way a lab kernel's text could run host code at a launch: a parameter of class type (or a
# reference, or an extra parameter with a default argument), whose constructor or conversion the
# launcher's call runs on the host (a `struct Len { Len(int64_t) { ... } }` size parameter did, in
# nvcc's host pass only, out of the CPU grader's sight). The launcher asserts, as the compiler sees the
# kernel's type, that it takes exactly the launcher's arguments, each a number, an enum or a pointer.
# The traits are named after a hash of the student's text, so that text cannot declare, specialise or
# #define them (the launcher's other names are guarded by launcher_redefinitions).
PLAIN_KERNEL = """template <class LabArg> struct lab_plain_parameter_@ { static constexpr bool value = !__is_class(LabArg) && !__is_union(LabArg); };
template <class LabArg> struct lab_plain_parameter_@<LabArg&> { static constexpr bool value = false; };
template <class LabArg> struct lab_plain_parameter_@<LabArg&&> { static constexpr bool value = false; };
template <int LabCount, class LabKernel> struct lab_plain_kernel_@ { static constexpr bool value = false; };
template <int LabCount, class... LabArg> struct lab_plain_kernel_@<LabCount, void (*)(LabArg...)> {
  static constexpr bool value = sizeof...(LabArg) == LabCount && (true && ... && lab_plain_parameter_@<LabArg>::value);
};
"""
KERNEL_CALL = re.compile(r"(\w+)<T><<<[^;]*?>>>\(([^;]*)\);")


def plain_kernel_guard(op: str, student_source: str) -> tuple[str, str]:
    """(PLAIN_KERNEL's traits, to follow the student's text; the static_assert that opens each entry point)
    for ``op``'s lab launcher. Both builds (this one and cuda_cpu's) put them in."""
    tag = hashlib.sha256(student_source.encode()).hexdigest()[:16]
    name, args = KERNEL_CALL.search(OPERATORS[op].cuda.launch).groups()
    return PLAIN_KERNEL.replace("@", tag), (
        f'static_assert(lab_plain_kernel_{tag}<{len(args.split(","))}, decltype(&{name}<T>)>::value, "{name} '
        f'must take exactly the lab\'s arguments, each a number or a pointer (a parameter of class or reference '
        f'type runs host code when the kernel is launched)");')


def full_source(op: str, student_source: str, own_launch: bool = False) -> str:
    """``own_launch``: the source defines ``launch<T>(...)`` (STEP_LAUNCHERS) instead of the lab's grid."""
    params, body = LAUNCHERS[op]
    traits, check = plain_kernel_guard(op, student_source)
    body = STEP_LAUNCHERS[op] if own_launch else check + "\n  " + body
    entries = [] if own_launch else [traits]
    for suffix, ctype in SUFFIX.values():
        entries.append(f'extern "C" int lab_{op}_{suffix}{params} {{\n  using T = {ctype};\n  {body}\n'
                       f"  return (int)cudaGetLastError();\n}}\n")
    # #line makes nvcc count the student's lines as their own: "CUDA_SOURCE(6): error: ..." is line
    # 6 of the string they wrote, not of this generated file
    return (PREAMBLE + '#line 1 "CUDA_SOURCE"\n' + student_source + '\n#line 1 "launcher_added_by_the_lab"\n'
            + "\n".join(entries))


CXX_KEYWORDS = frozenset("""alignas alignof asm auto bool break case catch char char16_t char32_t class const constexpr
    const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false float for
    friend goto if inline int long mutable namespace new noexcept nullptr operator private protected public register
    reinterpret_cast return short signed sizeof static static_assert static_cast struct switch template this
    thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while""".split())
DEFINE = re.compile(r"^[ \t]*(?:#|%:)[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)


def launcher_redefinitions(op: str, student_source: str, own_launch: bool = False) -> list[tuple[int, str]]:
    """(line, name) of each macro the student's text defines under a name the lab's launcher uses: the
    launcher follows their text, so such a macro rewrites it (a `#define cudaGetLastError()` once ran
    host code of the student's that launched the work on a stream of its own)."""
    launcher = full_source(op, "", own_launch).split('#line 1 "launcher_added_by_the_lab"', 1)[1]
    names = set(re.findall(r"[A-Za-z_]\w*", launcher))  # its keywords too (`#define return ...`)
    text = re.sub(r"\\\r?\n", "", student_source)  # line splices join a directive's lines first
    return [(text.count("\n", 0, m.start()) + 1, m[1]) for m in DEFINE.finditer(text) if m[1] in names]


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


def _nvcc_cwd() -> str:
    """Where nvcc runs: its implicit `-include cuda_runtime.h` looks in the working directory first,
    so never a folder someone else can write (CUDA's own include folder holds the real one)."""
    include = Path(_nvcc()).resolve().parents[1] / "include"
    return str(include if include.is_dir() else Path("/"))


def _run_nvcc(args: list[str]) -> None:
    result = subprocess.run([_nvcc(), "-std=c++17", "-O3", *args], capture_output=True, text=True, timeout=600,
                            cwd=_nvcc_cwd())
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
    signature are checked. Returns the object's path. The source is checked first (check_source:
    as written, and as nvcc's device and host passes preprocess it)."""
    src = _write(op, student_source, own_launch, arch)
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
    src = _write(op, student_source, own_launch, f"sm_{major}{minor}")
    lib = src.with_suffix(f".sm{major}{minor}.so")
    if not lib.exists():
        # cudart as a shared library: the kernel's library then imports only CUDA's launch
        # functions (a static cudart brings dlopen, sockets and files, see host_problems)
        cuda_lib = Path(_nvcc()).resolve().parents[1] / "lib64"
        _run_nvcc([f"-arch=sm_{major}{minor}", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                   "-Xlinker", f"-rpath={cuda_lib}", str(src), "-o", str(lib)])
    return lib


def host_problems(lib: Path, extra_allowed: re.Pattern | None = None, indirect: bool = True) -> list[str]:
    """What the host code of a built library or object file may not do: import a function outside
    ALLOWED_* (or ``extra_allowed``, a pattern a whole name must match: the CPU build's object),
    define one of those names itself, hold a system-call instruction, run code when it is loaded
    or unloaded beyond the toolchain's own (startup_problems), or (``indirect=False``: the CPU
    build, whose kernel runs as host code) call or jump through a computed address. Empty for a
    clean lab kernel."""
    dynamic = ["-D"] if lib.suffix == ".so" else []  # an object file (no GPU here) lists them plainly
    result = subprocess.run(["nm", *dynamic, "--undefined-only", str(lib)], capture_output=True, text=True,
                            timeout=60)
    if result.returncode:
        raise RuntimeError(f"nm could not read {lib.name}: {result.stderr.strip()[:300]}")
    names = {line.split()[-1].split("@")[0] for line in result.stdout.splitlines() if line.strip()}
    bad = sorted(n for n in names if not _allowed_import(n, extra_allowed))
    problems = [f"calls {', '.join(bad)}"] if bad else []
    # A definition of an allowed name would stand in for it (the launch stubs' own calls, memcpy...):
    # C names come only from extern "C" or asm labels, which check_source refuses; this is the backstop.
    result = subprocess.run(["nm", *dynamic, "--defined-only", "--extern-only", str(lib)], capture_output=True,
                            text=True, timeout=60)
    defined = {line.split()[-1].split("@")[0] for line in result.stdout.splitlines() if len(line.split()) >= 3}
    clash = sorted(n for n in defined if n not in ("_init", "_fini") and _allowed_import(n, extra_allowed)
                   and not n.startswith(("_ITM_", "__gmon")))
    if clash:
        problems.append(f"defines {', '.join(clash)}, which the runtime provides")
    code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                          timeout=120)
    if code.returncode or SYSCALL_INSTRUCTIONS.search(code.stdout):
        problems.append("holds system-call instructions" if not code.returncode else "could not be disassembled")
    if not indirect and INDIRECT_INSTRUCTIONS.search(code.stdout):
        problems.append("calls or jumps through a computed address (a function pointer, a virtual call, a computed "
                        "goto): on the CPU the kernel runs as this machine's code, where such a call reaches "
                        "functions it may not import; a lab kernel calls its functions by name")
    problems += startup_problems(lib, code.stdout if not code.returncode else "")
    return problems


def _allowed_import(name: str, extra_allowed: re.Pattern | None = None) -> bool:
    return (name in ALLOWED_IMPORTS or name.startswith(ALLOWED_PREFIXES)
            or bool(extra_allowed and extra_allowed.fullmatch(name)))


# ---- code that runs when a library is loaded or unloaded ----
# A lab kernel's host code runs only when the lab calls it. What runs without being called: the
# entries of .init_array/.preinit_array/.ctors (constructors: __attribute__((constructor)), a
# static object with a constructor, any dynamic initializer of a namespace-scope variable), of
# .fini_array/.dtors, code placed in .init/.fini, and IFUNC resolvers (run while the library is
# relocated). The toolchain puts in a clean lab kernel exactly these (the lab 1 solution, compiled
# each way; `readelf -r` of the .init_array relocations, resolved to their functions):
#   nvcc's object (compile_check):      .init_array -> __sti____cudaRegisterAll (the fat binary's registration)
#   nvcc's library (build_library):     .init_array -> frame_dummy (crtbeginS.o), __sti____cudaRegisterAll;
#                                       .fini_array -> __do_global_dtors_aux (crtbeginS.o); .init/.fini from crti/crtn
#   the CPU build's student object:     .init_array.00099 -> _sub_I_00099_0, GCC's ThreadSanitizer module
#                                       constructor, whose only call is __tsan_init (ours: a no-op)
# Each at most once; anything else (a second constructor in .init_array, a .init_array.00101 of a
# priority constructor, a .ctors section, a .fini_array destructor) is the student's, and refused.
TOOLCHAIN_STARTUP = {
    ".o": {(".init_array", "_ZL24__sti____cudaRegisterAllv"), (".init_array.00099", "_sub_I_00099_0")},
    ".so": {(".init_array", "frame_dummy"), (".init_array", "_ZL24__sti____cudaRegisterAllv"),
            (".fini_array", "__do_global_dtors_aux")},
}
TSAN_CONSTRUCTOR = ("_sub_I_00099_0", {"__tsan_init"})  # the function, and all it may call
STARTUP_SECTION = re.compile(r"\.(init_array|fini_array|preinit_array|ctors|dtors)(\..*)?|\.(init|fini)")
STARTUP_TYPES = {"INIT_ARRAY", "FINI_ARRAY", "PREINIT_ARRAY"}
# crti/crtn's _init and _fini: a frame, the optional call of __gmon_start__ (through %rax), return
_CRT_INSTRUCTIONS = {"sub", "add", "mov", "test", "je", "call", "ret", "endbr64", "nop", "nopl", "nopw", "xchg"}


def _readelf(path: Path) -> tuple[dict, list, dict]:
    """(sections: index -> (name, type, address, size); symbols: (num, value, size, type, ndx, name)
    of the full symbol table (.symtab); relocations: section name -> [(offset, symbol num, type,
    symbol name as printed, addend)], the entries of same-named sections together)."""
    out = subprocess.run(["readelf", "-W", "-S", "-s", "-r", str(path)], capture_output=True, text=True, timeout=60)
    if out.returncode:
        raise RuntimeError(f"readelf could not read {path.name}: {out.stderr.strip()[:300]}")
    sections, symbols, relocations = {}, [], {}
    table, current = None, None
    for line in out.stdout.splitlines():
        if m := re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s", line):
            sections[int(m[1])] = (m[2], m[3], int(m[4], 16), int(m[5], 16))
        elif m := re.match(r"Symbol table '(\S+)'", line):
            table, current = m[1], None
        elif m := re.match(r"Relocation section '(\S+)'", line):
            current, table = m[1], None
            relocations.setdefault(current, [])
        elif table == ".symtab" and (m := re.match(
                r"\s*(\d+): ([0-9a-f]+)\s+(\d+|0x[0-9a-f]+)\s+(\S+)\s+\S+\s+\S+\s+(\S+)\s*(\S*)", line)):
            symbols.append((int(m[1]), int(m[2], 16), int(m[3], 0), m[4], m[5], m[6].split("@")[0]))
        elif current and (m := re.match(r"([0-9a-f]+)\s+([0-9a-f]+)\s+(\S+)\s+(.*)$", line)):
            rest = m[4].strip()
            if named := re.fullmatch(r"[0-9a-f]+\s+(.+?)\s*([+-])\s*([0-9a-f]+)", rest):
                name, addend = named[1].split("@")[0], int(named[3], 16) * (-1 if named[2] == "-" else 1)
            elif bare := re.fullmatch(r"[0-9a-f]+", rest):
                name, addend = "", int(bare[0], 16)
            else:
                name, addend = rest, 0
            relocations[current].append((int(m[1], 16), int(m[2], 16) >> 32, m[3], name, addend))
    return sections, symbols, relocations


def startup_problems(path: Path, disassembly: str = "") -> list[str]:
    """Code ``path`` (an object file or a library) runs when loaded or unloaded that is not the
    toolchain's own (TOOLCHAIN_STARTUP), and IFUNC symbols. Empty for a clean lab kernel."""
    sections, symbols, relocations = _readelf(path)
    by_num = {s[0]: s for s in symbols}
    functions = {}  # (section index, value) -> name; in a library the address alone counts
    for num, value, size, kind, ndx, name in symbols:
        if kind in ("FUNC", "IFUNC") and ndx.isdigit():
            functions[(int(ndx), value)] = name
            functions.setdefault((None, value), name)
    kind = ".so" if path.suffix == ".so" else ".o"
    allowed, entries, done = TOOLCHAIN_STARTUP[kind], [], set()
    for index, (name, stype, address, size) in sections.items():
        if not (STARTUP_SECTION.fullmatch(name) or stype in STARTUP_TYPES):
            continue
        if name in (".init", ".fini"):
            if kind == ".o":
                entries.append((name, "code placed in the section"))
            elif not _crt_only(disassembly, name):  # crti/crtn's frame alone
                entries.append((name, "code beyond the C runtime's"))
            continue
        if kind == ".o":  # each entry is a relocation (sections of one name share their relocation list)
            found = relocations.get(".rela" + name, []) + relocations.get(".rel" + name, [])
            if name not in done:
                done.add(name)
                for offset, num, rtype, printed, addend in found:
                    sym = by_num.get(num)
                    if sym is None:
                        entries.append((name, printed or "?"))
                    elif sym[3] == "SECTION" and sym[4].isdigit():
                        entries.append((name, functions.get((int(sym[4]), addend),
                                                            f"{sections.get(int(sym[4]), ('?',))[0]}+{addend:#x}")))
                    else:
                        entries.append((name, sym[5] if addend == 0 else f"{sym[5]}+{addend:#x}"))
            if size and not found:
                entries.append((name, "an entry without a relocation"))
        else:  # a library: each 8-byte slot, as the dynamic relocations fill it
            slots = {}
            for rel in relocations.values():
                for offset, num, rtype, printed, addend in rel:
                    if address <= offset < address + size:
                        slots[offset] = (functions.get((None, addend), f"{addend:#x}") if rtype.endswith("RELATIVE")
                                         else printed or "?")
            for slot in range(address, address + size, 8):
                entries.append((name, slots.get(slot, "an entry without a relocation")))
    problems, seen = [], set()
    for entry in entries:
        if entry in allowed and entry not in seen:
            seen.add(entry)
            if entry[1] == TSAN_CONSTRUCTOR[0] and not _calls_only(sections, symbols, relocations, *TSAN_CONSTRUCTOR):
                problems.append(f"{entry[1]} (in {entry[0]}) calls more than {', '.join(TSAN_CONSTRUCTOR[1])}")
            continue
        problems.append(f"{_demangle(entry[1])} (in {entry[0]})")
    ifuncs = sorted({s[5] for s in symbols if s[3] == "IFUNC"})
    text = []
    if problems:
        text.append("runs code of its own when the library is loaded or unloaded: " + "; ".join(problems)
                    + " (a constructor or destructor: a namespace-scope object with a constructor or a dynamic "
                    "initializer, such as `struct S { S() {...} } s;` or `static int v = f();`, or an attribute)")
    if ifuncs:
        text.append(f"has IFUNC symbols {', '.join(ifuncs)} (their resolvers run while the library loads)")
    return text


def _crt_only(disassembly: str, section: str) -> bool:
    """Whether ``section`` (.init or .fini) of a library's disassembly is crti/crtn's alone: one
    function (_init or _fini) of a few frame instructions, whose only call is __gmon_start__'s."""
    body = disassembly.split(f"Disassembly of section {section}:\n", 1)
    if len(body) < 2:
        return False
    body = body[1].split("Disassembly of section ", 1)[0]
    labels = re.findall(r"^[0-9a-f]+ <([^>]+)>:$", body, re.M)
    ops = [m.split()[0] for m in re.findall(r"^\s+[0-9a-f]+:\t(\S[^\n]*)$", body, re.M)]
    return (labels == [f"_{section[1:]}"] and len(ops) <= 10 and all(op in _CRT_INSTRUCTIONS for op in ops)
            and all("*%rax" in ln for ln in body.splitlines() if "\tcall" in ln))


def _calls_only(sections: dict, symbols: list, relocations: dict, function: str, callees: set) -> bool:
    """Whether every relocation inside ``function`` (of an object file) names one of ``callees``
    (one function of that name, in a section of a name no other section has)."""
    found = [s for s in symbols if s[5] == function and s[3] == "FUNC" and s[4].isdigit()]
    if len(found) != 1:
        return False
    num, value, size, kind, ndx, name = found[0]
    section = sections[int(ndx)][0]
    if [n for n, *_ in sections.values()].count(section) != 1:
        return False
    by_num = {s[0]: s for s in symbols}
    return all(by_num.get(sym, (0, 0, 0, "", "", "?"))[5] in callees
               for offset, sym, rtype, printed, addend in relocations.get(".rela" + section, [])
               if value <= offset < value + size)


def _demangle(name: str) -> str:
    if not name.startswith("_Z"):
        return name
    result = subprocess.run(["c++filt", name], capture_output=True, text=True, timeout=30)
    return result.stdout.strip() or name if result.returncode == 0 else name


# ---- what a student's CUDA source may hold: checked before it is compiled ----
#
# A lab kernel is a templated __global__ function (and __device__ helpers) in plain CUDA C++. The
# grader builds it twice on a CPU machine (nvcc for sm_90, then g++ against our header to run it)
# and once on a GPU machine; the source is refused when it holds anything that could (a) run host
# code the grader never called, or reach past the C library (constructors, sections, aliases,
# inline assembly: all attributes or asm), (b) bring code of its own choosing into the build
# (#include, #line, pragmas), or (c) tell the CPU grader from a GPU (a macro one build has and the
# other lacks, the file's name, the compiler's own macros), so that a kernel could pass on the CPU
# grader and do nothing on a GPU. Allowlist-minded: what is allowed is listed; the rest is refused.
#
# Two layers, because either alone can be fooled:
# 1. The text as written (source_rules), lexed as the preprocessor lexes it (line splices joined,
#    comments dropped, digraphs such as %: and <: read as # and [): the directives allowed are
#    #define, #undef, #if/#ifdef/#ifndef/#elif/#else/#endif, #error and #pragma unroll; a macro
#    may not paste (##) or stringize (#) tokens (CAT(__attri,bute__) and STR(threadIdx) are how a
#    name is smuggled past a check or a build told apart), nor redefine a macro of the compiler or
#    of CUDA's headers, nor use `defined`; #if may test only the student's own macros and
#    PARITY_MACROS (the same in every build: the emulator defines them as nvcc does); no reserved
#    name that is a macro of some build (__BASE_FILE__, __COUNTER__, __SANITIZE_THREAD__,
#    __CUDACC_VER_MAJOR__, __annotate__ ... : all differ between builds or expand to attributes)
#    beyond CUDA's qualifiers and intrinsics (API_MACROS); no GNU extension words (GNU_WORDS: asm,
#    __attribute__, __declspec, __builtin_*, _Pragma, __PRETTY_FUNCTION__ ...), no [[...]]
#    attribute, no extern "C" (a C name is how a definition stands in for a library's function),
#    no raw string literal (its lines would be copied verbatim into the preprocessed text).
# 2. The text as each compiler sees it (expanded_rules): the translation unit preprocessed by the
#    real compile path (nvcc -E for the device pass, the same with __CUDA_ARCH__ undefined for the
#    host pass, g++ -E with our header for the CPU build), and of its output only the lines the
#    line markers attribute to "CUDA_SOURCE" (the full source has `#line 1 "CUDA_SOURCE"` before
#    the student's text): a file entered from there is an #include however it was spelled
#    (%:include, a macro); a rename is a #line; #pragma other than unroll (what _Pragma becomes);
#    asm, __declspec, [[, extern "...", and __attribute__ beyond the forms CUDA's qualifiers
#    expand to (CUDA_ATTRIBUTES: __global__ is __attribute__((global)) in nvcc's host pass), and
#    __builtin_* or __PRETTY_FUNCTION__ unless a system header's macro produced them (INFINITY is
#    (__builtin_inff ()), assert names __PRETTY_FUNCTION__; GCC flags those tokens with flag 3).
# Both are cached by the text's hash (preprocessing costs a few hundred ms; the labs build one
# source many times). Not covered here: what C++ itself lets a kernel observe (sizeof(threadIdx),
# pointer values, timing); the built objects are checked as well (host_problems).
CHECK_VERSION = "2"
SOURCE_FILE, LAUNCHER_FILE = "CUDA_SOURCE", "launcher_added_by_the_lab"
# The headers PREAMBLE includes: a kernel may name them again (a no-op: layer 2 checks that the second
# inclusion adds no line), no other
PREAMBLE_HEADERS = ("cstdint", "cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h")
# What #if may test besides the student's own macros: defined alike in nvcc's device pass and the
# CPU build (tests/grader/test_cuda_source_check.py compares them); __CUDA_ARCH__ is undefined in nvcc's
# host pass, which the check preprocesses as well.
PARITY_MACROS = ("__CUDA_ARCH__", "__CUDACC__", "__NVCC__")
# Reserved names that are macros in some build and that a lab kernel may write: CUDA's qualifiers
# (nvcc's host_defines.h) and the intrinsics our header defines as macros (functions in CUDA).
API_MACROS = frozenset({
    *PARITY_MACROS, "__global__", "__device__", "__host__", "__shared__", "__constant__", "__managed__",
    "__forceinline__", "__noinline__", "__launch_bounds__", "__align__", "__grid_constant__", "__maxnreg__",
    "__cluster_dims__", "__CUDA_ALIGN__", "__syncthreads", "__syncthreads_count", "__syncthreads_and",
    "__syncthreads_or", "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync", "__all_sync", "__activemask", "__trap", "__VA_ARGS__", "__VA_OPT__",
    "__LINE__", "__FILE__"})
# What CUDA's qualifiers expand to in nvcc's passes (__attribute__((NAME...))); all describe where
# code runs or how it is laid out, none runs code
CUDA_ATTRIBUTES = frozenset({"global", "device", "host", "shared", "constant", "managed", "always_inline", "noinline",
                             "launch_bounds", "aligned", "grid_constant", "maxnreg", "cluster_dims"})
# The preprocessor's own names (not listed by -dM): file names, times, counters, feature tests
PREPROCESSOR_BUILTINS = frozenset({
    "__COUNTER__", "__BASE_FILE__", "__FILE_NAME__", "__INCLUDE_LEVEL__", "__DATE__", "__TIME__", "__TIMESTAMP__",
    "__has_include", "__has_include_next", "__has_attribute", "__has_cpp_attribute", "__has_c_attribute",
    "__has_builtin", "__has_feature", "__has_extension", "__has_warning", "_Pragma", "__pragma"})
# GCC's (and MSVC's) extensions: inline assembly, attributes, builtins that reach the stack or the
# code (__builtin_frame_address, __builtin_return_address), names whose value differs between
# compilers (__PRETTY_FUNCTION__). A lab kernel is CUDA C++: it needs none of them.
GNU_WORDS = frozenset({"asm", "__asm__", "__asm", "__attribute__", "__attribute", "__declspec", "__extension__",
                       "__PRETTY_FUNCTION__", "__FUNCSIG__", "__FUNCDNAME__", "__typeof__", "__typeof", "__label__",
                       "__thread", "__int128", "__real__", "__imag__", "__volatile__"})
GNU_PREFIXES = ("__builtin_", "__sync_", "__atomic_")
DIRECTIVES = frozenset({"define", "undef", "if", "ifdef", "ifndef", "elif", "else", "endif", "error", "pragma"})
DIGRAPHS = {"%:": "#", "%:%:": "##", "<:": "[", ":>": "]", "<%": "{", "%>": "}"}
_UCN = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_PP_TOKEN = re.compile(rf"""
    (?P<nl>\n)
  | (?P<ws>[ \t\f\v\r]+)
  | (?P<comment>//[^\n]*|/\*[\s\S]*?(?:\*/|\Z))
  | (?P<raw>(?:u8|[uUL])?R"(?P<delim>[^ ()\\\t\v\f\n]{{0,16}})\()
  | (?P<str>(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*"?)
  | (?P<chr>(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*'?)
  | (?P<num>\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*)
  | (?P<id>(?:[A-Za-z_$]|[^\x00-\x7f]|{_UCN})(?:[\w$]|[^\x00-\x7f]|{_UCN})*)
  | (?P<lt><(?=::[^:>]))
  | (?P<punct>%:%:|%:|<:|:>|<%|%>|\#\#|\#|::|\.\.\.|->\*|->|<<=|>>=|<=>|&&|\|\||<<|>>|\+\+|--|\.\*|[-+*/%^&|<>=!]=|\S)
""", re.X)
# The most a lab kernel's source may be (they are a few KB): the checks and the compilers stay cheap
MAX_SOURCE_BYTES = 256 * 1024


class Token(tuple):
    """(kind, text, line, start, end, system): text with digraphs spelled as their plain tokens."""
    kind = property(lambda t: t[0])
    text = property(lambda t: t[1])
    line = property(lambda t: t[2])


def _lex(text: str, first_line: int = 1, system: bool = False, splices: bool = True) -> list[Token]:
    """Preprocessing tokens of ``text`` with their (physical) line; newlines are tokens, comments
    and blanks are not. Line splices (backslash, blanks, newline) are joined first, as the compiler does."""
    splice_at = []
    if splices:
        text = text.replace("\r\n", "\n")
        pieces, pos, length = [], 0, 0
        for m in re.finditer(r"\\[ \t\f\v]*\n", text):
            pieces.append(text[pos:m.start()])
            length += m.start() - pos
            splice_at.append(length)
            pos = m.end()
        pieces.append(text[pos:])
        text = "".join(pieces)
    newlines = [i for i, c in enumerate(text) if c == "\n"]
    tokens = []
    pos = 0
    while pos < len(text):
        m = _PP_TOKEN.match(text, pos)
        kind, start, pos = m.lastgroup if m.lastgroup != "delim" else "raw", m.start(), m.end()
        if kind == "raw":  # to its closing )delim" (found, not matched: linear however many there are)
            close = text.find(")" + m["delim"] + '"', pos)
            pos = len(text) if close < 0 else close + len(m["delim"]) + 2
        if kind in ("ws", "comment"):
            continue
        value = text[start:pos]
        if kind == "lt":
            kind = "punct"
        elif kind == "punct":
            value = DIGRAPHS.get(value, value)
        line = first_line + bisect.bisect_left(newlines, start) + bisect.bisect_right(splice_at, start)
        tokens.append(Token((kind, value, line, start, pos, system)))
    return tokens


def _spell(tokens: list) -> str:
    """Tokens as one would write them: a blank only between two words."""
    out = ""
    for t in tokens:
        if out and (out[-1].isalnum() or out[-1] in "_$\"'") and (t.text[0].isalnum() or t.text[0] in "_$\"'"):
            out += " "
        elif out and t.text in ("{", "}") or out.endswith((",", ";")):
            out += " "
        out += t.text
    return out


def _reserved(name: str) -> bool:
    return name.startswith("__") or (name.startswith("_") and name[1:2].isupper())


def _logical_lines(tokens: list[Token]) -> list[list[Token]]:
    lines, current = [], []
    for t in tokens:
        if t.kind == "nl":
            lines.append(current)
            current = []
        else:
            current.append(t)
    return [*lines, current]


def _word_problem(t: Token) -> str | None:
    """What is wrong with the identifier token ``t`` wherever it stands (layer 1 and 2 alike)."""
    if t.text in ("asm", "__asm__", "__asm", "__volatile__"):
        return f"`{t.text}`: inline assembly has no place in a lab kernel"
    if t.text in ("__attribute__", "__attribute", "__declspec"):
        return (f"`{t.text}`: lab kernels may not use attributes (constructors, sections, aliases...); "
                "CUDA's qualifiers (__global__, __device__, __forceinline__, __launch_bounds__...) are enough")
    if t.text in GNU_WORDS or t.text.startswith(GNU_PREFIXES):
        return (f"`{t.text}` is a GCC extension, not CUDA: lab kernels use CUDA's intrinsics "
                "(__popc, __clz, __ldg, __shfl_down_sync...), not compiler builtins")
    if t.text in PREPROCESSOR_BUILTINS:
        return f"`{t.text}` is the preprocessor's, not CUDA's: lab kernels have no use for it"
    return None


def source_rules(source: str, build_macros: frozenset = frozenset()) -> list[tuple[int, str]]:
    """Layer 1: the student's text as written. ``build_macros``: the names of every macro of the
    builds (environment_macros), for the rules on reserved names and on #define. [(line, problem)]"""
    tokens = _lex(source)
    problems: list[tuple[int, str]] = []
    lines = _logical_lines(tokens)
    defined: dict[str, list[list[str]]] = {}  # student macro -> identifiers of each definition's body
    conditionals: list[tuple[int, str, list[Token]]] = []
    for line in lines:
        if not line or line[0].text != "#" or line[0].kind != "punct":
            continue
        at = line[0].line
        if len(line) == 1:
            continue  # the null directive
        name = line[1].text
        rest = line[2:]
        if line[1].kind != "id" or name not in DIRECTIVES:
            target = _spell(rest)
            if name == "include" and re.fullmatch(r'<([\w.]+)>|"([\w.]+)"', target) and \
                    target[1:-1] in PREAMBLE_HEADERS:
                continue  # included already: the second time adds nothing (layer 2 makes sure)
            if name in ("include", "include_next", "import", "embed"):
                problems.append((at, f"`#{name} {target}`: a lab kernel includes nothing (the lab gives it "
                                     "<cstdint>, cuda_runtime.h, cuda_fp16.h and cuda_bf16.h already)"))
            else:
                problems.append((at, f"`#{name}`: lab kernels use only #define, #undef, #if, #ifdef, #ifndef, #elif, "
                                     "#else, #endif and #pragma unroll"))
            continue
        if name in ("define", "undef"):
            if not rest or rest[0].kind != "id":
                continue  # the compiler says what is wrong
            macro = rest[0].text
            if macro in CXX_KEYWORDS:  # `#define return ...` rewrote the lab's launcher into host code of theirs
                problems.append((at, f"`#{name} {macro}`: {macro} is a C++ keyword; a macro may not redefine the "
                                     "language (choose a name of your own)"))
                continue
            if _reserved(macro) or "__" in macro or macro in build_macros:
                problems.append((at, f"`#{name} {macro}`: {macro} is " + (
                    "a name reserved for the compiler and CUDA" if _reserved(macro) or "__" in macro
                    else "a macro of CUDA's headers or of the compiler") + ": choose a name of your own"))
            if name == "undef":
                continue
            body, params = rest[1:], set()
            if body and body[0].text == "(" and body[0][3] == rest[0][4]:  # function-like: NAME( with no blank
                close = next((i for i, t in enumerate(body) if t.text == ")"), len(body) - 1)
                params = {t.text for t in body[1:close] if t.kind == "id"}
                body = body[close + 1:]
            for t in body:
                if t.kind == "punct" and t.text in ("#", "##"):
                    problems.append((t.line, f"`{t.text}` in the macro {macro}: macros may not paste (##) or "
                                             "stringize (#) tokens; write the names out"))
                elif t.text == "defined":
                    problems.append((t.line, f"`defined` in the macro {macro}: test macros in #if itself"))
            defined.setdefault(macro, []).append([t.text for t in body if t.kind == "id" and t.text not in params])
        elif name in ("if", "elif", "ifdef", "ifndef"):
            conditionals.append((at, name, rest))
        elif name == "pragma":
            words = rest
            if not words or words[0].text != "unroll" or any(t.kind in ("str", "chr", "raw") for t in words[1:]):
                problems.append((at, f"`#pragma {_spell(words)}`: the only pragma a lab kernel "
                                     "needs is #pragma unroll (with an optional count)"))

    def testable(name: str, seen: set) -> bool:
        if name in PARITY_MACROS or name in ("defined", "true", "false"):
            return True
        if name not in defined:
            return False
        if name in seen:
            return True
        seen.add(name)
        return all(testable(n, seen) for body in defined[name] for n in body)

    for at, name, rest in conditionals:
        for t in rest:
            if t.kind == "id" and not testable(t.text, set()):
                problems.append((at, f"`#{name} {_spell(rest)}` tests {t.text}: #if may test only "
                                     f"your own macros and {', '.join(PARITY_MACROS)} (anything else may differ "
                                     "between the GPU build and the CPU grader)"))
                break
    previous = None
    for t in tokens:
        if t.kind == "raw":
            problems.append((t.line, "a raw string literal (R\"...\"): lab kernels have no use for one"))
        elif t.kind == "id":
            problem = _word_problem(t)
            if problem is None and _reserved(t.text) and t.text in build_macros and t.text not in API_MACROS:
                problem = (f"`{t.text}` is a macro of the compiler or of CUDA's headers, not part of CUDA's API "
                           "(it may differ between the GPU build and the CPU grader): lab kernels have no use for it")
            if problem is None and "\\u" in t.text or "\\U" in t.text:
                problem = f"`{t.text}`: write names in plain ASCII"
            if problem:
                problems.append((t.line, problem))
        if previous is not None:
            problems += _pair_problems(previous, t)
        previous = t if t.kind != "nl" else previous
    return problems


def _pair_problems(a: Token, b: Token) -> list[tuple[int, str]]:
    if a.text == "[" and b.text == "[" and a.kind == b.kind == "punct":
        return [(a.line, "`[[ ... ]]`: lab kernels may not use attributes ([[gnu::constructor]], [[using gnu: ...]]); "
                         "CUDA's qualifiers are enough")]
    if a.kind == "id" and a.text == "goto" and b.text == "*":
        return [(a.line, "`goto *`: a computed goto jumps to an address; lab kernels use loops and ifs")]
    if a.kind == "id" and a.text == "extern" and b.kind == "str":
        return [(a.line, f"`extern {b.text}`: a lab kernel declares no functions of another language (its entry "
                         "points are the lab's)")]
    return []


MARKER = re.compile(r'# (\d+) "((?:[^"\\]|\\.)*)"((?: \d+)*)\s*$')


def expanded_rules(output: str) -> list[tuple[int, str]]:
    """Layer 2: the preprocessed translation unit (``-E`` output), its lines from CUDA_SOURCE."""
    lines = output.split("\n")
    marks = [(i, MARKER.match(ln)) for i, ln in enumerate(lines) if ln.startswith("# ")]
    marks = [(i, m) for i, m in marks if m]
    start = next((i for i, m in marks if m[2] == SOURCE_FILE), None)
    end = next((i for i, m in reversed(marks) if m[2] == LAUNCHER_FILE), None)
    if start is None or end is None or end < start:
        return [(1, "the source does not end where it should (an unterminated comment or #if?)")]
    problems, segments = [], []
    depth, current, number, system, entered, content = 0, SOURCE_FILE, 1, False, None, False
    for i in range(start, end):
        ln = lines[i]
        m = MARKER.match(ln) if ln.startswith("# ") else None
        if m:
            flags = m[3].split()
            if "1" in flags:
                if depth == 0:
                    entered, content = m[2], False
                depth += 1
            elif "2" in flags and depth:
                depth -= 1
                if depth == 0 and (content or Path(entered).name not in PREAMBLE_HEADERS):
                    problems.append((int(m[1]) - 1, f"`#include` of {Path(entered).name}: a lab kernel includes nothing "
                                                    "(the lab gives it <cstdint>, cuda_runtime.h, cuda_fp16.h and "
                                                    "cuda_bf16.h already)"))
            elif depth == 0 and m[2] != SOURCE_FILE:
                problems.append((number, f"a `#line` naming {m[2]}: lab kernels keep their own line numbers"))
            current, number, system = m[2], int(m[1]), "3" in flags
            continue
        if depth:
            content = content or bool(ln.strip())
        elif current == SOURCE_FILE:
            stripped = ln.strip()
            if stripped.startswith("#"):
                if not re.match(r"#\s*pragma\s+unroll\b[\w\s()+\-*/<>]*$", stripped):
                    problems.append((number, f"`{stripped[:80]}` (after macro expansion): the only pragma a lab kernel "
                                             "needs is #pragma unroll"))
            else:
                segments += _lex(ln, number, system, splices=False)
        number += 1
    if depth:
        problems.append((number, f"`#include` of {Path(entered or '?').name}: a lab kernel includes nothing"))
    tokens = [t for t in segments if t.kind != "nl"]
    for k, t in enumerate(tokens):
        if t.kind != "id":
            if k + 1 < len(tokens):
                problems += _pair_problems(t, tokens[k + 1])
            continue
        if t.text in ("__attribute__", "__attribute"):
            names, text = _attribute(tokens, k)
            bad = [n for n in names if n.strip("_") not in CUDA_ATTRIBUTES]
            if bad or not names:
                problems.append((t.line, f"`{text}` (after macro expansion): lab kernels may not use attributes "
                                         "(constructors, sections, aliases...); CUDA's qualifiers are enough"))
        elif t.text in ("asm", "__asm__", "__asm", "__declspec"):
            problems.append((t.line, f"`{t.text}` (after macro expansion): " + _word_problem(t).split(": ", 1)[1]))
        elif (t.text.startswith("__builtin_") or t.text in ("__PRETTY_FUNCTION__", "__FUNCSIG__")) and not t[5]:
            problems.append((t.line, f"`{t.text}` (after macro expansion): " + _word_problem(t).split(" is ", 1)[1]))
        if k + 1 < len(tokens):
            problems += _pair_problems(t, tokens[k + 1])
    return problems


def _attribute(tokens: list[Token], k: int) -> tuple[list[str], str]:
    """The attribute names of ``__attribute__((a, b(args)))`` starting at tokens[k], and its text."""
    depth, i, names, expect_name = 0, k + 1, [], False
    while i < len(tokens):
        t = tokens[i]
        if t.text == "(":
            depth += 1
            expect_name = depth == 2
        elif t.text == ")":
            depth -= 1
            if depth <= 0:
                break
        elif depth == 2 and t.text == ",":
            expect_name = True
        elif depth == 2 and expect_name:
            names.append(t.text)
            expect_name = False
        elif depth == 0:
            break
        i += 1
    return names, _spell(tokens[k:min(i + 1, k + 40)])


class Pass(tuple):
    """One preprocessing of the translation unit: (kind, path of the unit, arch); kind is
    nvcc-device, nvcc-host (nvcc's two passes over a .cu) or cpu (g++ with our header)."""

    def __new__(cls, kind: str, path: Path, arch: str = "sm_90"):
        return super().__new__(cls, (kind, Path(path), arch))


# nvcc -E preprocesses for the device (__CUDA_ARCH__ set); its host pass is the same gcc -E without
# __CUDA_ARCH__ and CUDA_DOUBLE_MATH_FUNCTIONS (`nvcc --dryrun` lists both commands)
HOST_PASS = ["-Xcompiler", "-U__CUDA_ARCH__,-UCUDA_DOUBLE_MATH_FUNCTIONS"]
_CHECKED: dict[str, list] = {}


def _pass_command(kind: str, path: Path, arch: str, dump_macros: bool = False) -> list[str]:
    if kind == "cpu":
        return [cpu_toolchain.gxx(), *cpu_toolchain.STUDENT_FLAGS, "-I", str(cpu_toolchain.INCLUDE), "-E",
                *(["-dM"] if dump_macros else []), "-x", "c++", str(path)]
    return [_nvcc(), "-std=c++17", "-O3", "-E", f"-arch={arch}", *(HOST_PASS if kind == "nvcc-host" else []),
            *(["-Xcompiler", "-dM"] if dump_macros else []), str(path)]


def _toolchain(kind: str) -> str:
    """What a pass's result depends on besides the text: the compiler (path, size, time) and our header."""
    if kind == "cpu":
        tool, extra = shutil.which(cpu_toolchain.gxx()) or cpu_toolchain.gxx(), cpu_toolchain.runtime_hash()
    else:
        tool, extra = str(Path(_nvcc()).resolve()), ""
    st = os.stat(tool)
    return f"{tool}:{st.st_size}:{st.st_mtime_ns}:{extra}"


def environment_macros(kinds: tuple = ("nvcc-device", "nvcc-host", "cpu")) -> dict[str, dict[str, str]]:
    """kind -> {macro name: definition} of each build's preamble (`-dM`), for the kinds whose compiler
    is installed; cached in CACHE by toolchain."""
    found = {}
    for kind in kinds:
        try:
            key = hashlib.sha256(f"{CHECK_VERSION}:{kind}:{_toolchain(kind)}".encode()).hexdigest()[:16]
        except (NoCompiler, OSError):
            continue
        if key in _CHECKED:
            found[kind] = _CHECKED[key]
            continue
        cached = CACHE / f"macros-{kind}-{key}.json"
        try:
            loaded = json.loads(cached.read_text())
            # a file that lacks what every build defines is not one we wrote: make it again
            if isinstance(loaded, dict) and {"__cplusplus", "__CUDACC__", "__NVCC__"} <= loaded.keys():
                found[kind] = _CHECKED[key] = loaded
                continue
        except (OSError, ValueError):
            pass
        CACHE.mkdir(parents=True, exist_ok=True)
        suffix, text = (".cc", cpu_toolchain.PREAMBLE) if kind == "cpu" else (".cu", PREAMBLE)
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            unit = Path(tmp) / f"preamble{suffix}"
            unit.write_text(text)
            result = subprocess.run(_pass_command(kind, unit, "sm_90", dump_macros=True), capture_output=True,
                                    text=True, timeout=300, cwd=_nvcc_cwd() if kind != "cpu" else "/")
        if result.returncode:
            raise RuntimeError(f"the {kind} preprocessor failed on the lab's preamble:\n{result.stderr[-2000:]}")
        macros = {}
        for line in result.stdout.splitlines():
            if m := re.match(r"#define ([A-Za-z_$][\w$]*)(\(.*?\))?\s?(.*)$", line):
                macros[m[1]] = (m[2] or "") + " " + m[3]
        _atomic_text(cached, json.dumps(macros))
        found[kind] = _CHECKED[key] = macros
    return found


def _atomic_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def written_problems(student_source: str) -> list[tuple[int, str]]:
    """Layer 1 (source_rules) with every build's macros (environment_macros); cached by hash."""
    if len(student_source.encode(errors="replace")) > MAX_SOURCE_BYTES:
        return [(1, f"the source is {len(student_source.encode(errors='replace')) // 1024} KB: a lab kernel is a "
                    f"few KB (at most {MAX_SOURCE_BYTES // 1024} KB)")]
    try:
        macros = environment_macros()
    except (RuntimeError, subprocess.SubprocessError):
        macros = {}
    names = frozenset().union(*[m.keys() for m in macros.values()]) if macros else frozenset()
    key = hashlib.sha256(f"{CHECK_VERSION}:{sorted(macros)}:{len(names)}:{student_source}".encode()).hexdigest()
    if key not in _CHECKED:
        _CHECKED[key] = source_rules(student_source, names)
    return list(_CHECKED[key])


def expanded_problems(passes: list) -> list[tuple[int, str]]:
    """Layer 2 (expanded_rules) on each of ``passes`` (Pass), run side by side. A preprocessing that
    fails adds nothing: the compile fails the same way and says why. Cached by the unit's hash, in
    memory and in CACHE (check-<hash>.json)."""
    problems, pending = [], []
    for kind, path, arch in passes:
        text = Path(path).read_text()
        key = hashlib.sha256(f"{CHECK_VERSION}:{kind}:{arch}:{_toolchain(kind)}:{text}".encode()).hexdigest()[:24]
        cached = CACHE / f"check-{key}.json"
        if key not in _CHECKED:
            try:
                _CHECKED[key] = [tuple(p) for p in json.loads(cached.read_text())]
            except (OSError, ValueError):
                pending.append((key, cached, subprocess.Popen(
                    _pass_command(kind, Path(path), arch), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    cwd=_nvcc_cwd() if kind != "cpu" else "/")))
                continue
        problems += _CHECKED[key]
    for key, cached, process in pending:
        try:
            out, _ = process.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            continue
        if process.returncode:
            continue
        _CHECKED[key] = expanded_rules(out)
        CACHE.mkdir(parents=True, exist_ok=True)
        _atomic_text(cached, json.dumps(_CHECKED[key]))
        problems += _CHECKED[key]
    return problems


def source_problems(student_source: str, passes: list = ()) -> list[tuple[int, str]]:
    """Every (line, problem) of the student's source: layer 1 on its text, layer 2 on each of
    ``passes``; a line the text as written already explains gets no second word on its expansion."""
    written = written_problems(student_source)
    lines = {line for line, _ in written}
    expanded = [p for p in expanded_problems(passes) if p[0] not in lines]
    return sorted(dict.fromkeys(written + expanded), key=lambda p: p[0])


# What is not even preprocessed: what reads a file (the preprocessor would read /dev/zero for
# ever) or forges the line markers layer 2 reads
_UNSAFE = re.compile(r"`#(include|include_next|import|embed|line|\d)|a raw string|the source is")


def refusal(problems: list[tuple[int, str]]) -> str:
    shown = problems[:8]
    return ("the CUDA source was refused (line numbers count the lines of CUDA_SOURCE):\n"
            + "\n".join(f"- line {line}: {text}" for line, text in shown)
            + (f"\n(and {len(problems) - len(shown)} more)" if len(problems) > len(shown) else "")
            + "\nA lab kernel is plain CUDA C++: __global__/__device__ functions, no includes, attributes, "
              "inline assembly or host code of its own.")


def check_source(student_source: str, passes: list = ()) -> None:
    """Raise AssertionError (each problem with its line of CUDA_SOURCE) when the student's source
    holds what a lab kernel may not (the rules above source_rules)."""
    problems = source_problems(student_source, passes)
    if problems:
        raise AssertionError(refusal(problems))


def checked_unit(student_source: str, unit, kinds: tuple, arch: str = "sm_90") -> Path:
    """``unit()`` writes the translation unit and returns its path; the source is checked as
    written and as each pass of ``kinds`` preprocesses it (nothing is preprocessed when the text
    already holds an #include or a #line). Returns the path; raises AssertionError (the refusal)."""
    unwritten = not_written(student_source)
    if unwritten:
        raise AssertionError(unwritten)
    written = written_problems(student_source)
    if any(_UNSAFE.match(text) for _, text in written):
        raise AssertionError(refusal(written))
    try:
        path = unit()
    except NoCompiler:
        if written:
            raise AssertionError(refusal(written)) from None
        raise
    check_source(student_source, [Pass(kind, path, arch) for kind in kinds])
    return path


def _write(op: str, student_source: str, own_launch: bool = False, arch: str = "sm_90") -> Path:
    """The translation unit nvcc compiles, in CACHE by hash, once check_source passed on it (the
    text as written, nvcc's device pass for ``arch`` and its host pass)."""
    redefined = launcher_redefinitions(op, student_source, own_launch)
    if redefined:
        line, name = redefined[0]
        raise AssertionError(f"line {line} of the CUDA source defines a macro `{name}`, a name the lab's launcher "
                             "uses: a lab kernel may not rewrite how it is launched (name your macros otherwise)")

    def unit() -> Path:
        text = full_source(op, student_source, own_launch)
        CACHE.mkdir(parents=True, exist_ok=True)
        src = CACHE / f"{op}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.cu"
        if not src.exists():
            src.write_text(text)
        _nvcc()  # NoCompiler before preprocessing, as before
        return src

    return checked_unit(student_source, unit, ("nvcc-device", "nvcc-host"), arch)


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
