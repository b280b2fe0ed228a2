"""What a student's CUDA source may hold, and what its built objects may run (issue 25):
cuda_build.check_source on the text as written and as each compiler preprocesses it, and
cuda_build.startup_problems (part of host_problems) on the objects.

- the course's own kernels pass: the labs' solutions, the chapters' step kernels, the fault
  catalogue, the control and mistake classes' CUDA;
- each attack is refused with its line of CUDA_SOURCE: constructors however spelled (token
  pasting, [[gnu::constructor]], [[using gnu: ...]], a line splice, nvcc's own __annotate__),
  includes (#include, %:include, a macro), pragmas (_Pragma too), #line, extern "C", asm,
  builtins, and the ways a kernel could tell the CPU grader from a GPU (a macro only one build
  has, the file's name, a stringized macro);
- layer 2 alone (the preprocessed text) refuses what a macro spells, should layer 1 miss it;
- a static object's constructor passes the source check and is refused in the objects, as is
  every other constructor, destructor, .ctors entry or IFUNC; the toolchain's own pass;
- the CPU build shows the macros nvcc's device pass shows (no __CUDA_ON_CPU__), and #if cannot
  test any that differ;
- the check is cached by hash.

CPU only (g++; nvcc, where installed, for its two passes and objects; no GPU)."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import torch

from operator_course.cuda import cuda_build, cuda_cpu
from operator_runtime_testing.operators import OPERATORS
from operator_course.grader.notebook import instructor_labs, lab_meta, read

ROOT = Path(__file__).resolve().parents[2]
HAS_NVCC = shutil.which("nvcc") is not None or any(Path("/usr/local").glob("cuda*/bin/nvcc"))
pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the CPU build and its check need g++")
needs_nvcc = pytest.mark.skipif(not HAS_NVCC, reason="nvcc's passes and objects need the CUDA toolkit")

KERNEL = """
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) y[i] = x[i];
}
"""
EMPTY_KERNEL = """
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {}
"""


def honest_kernels() -> dict[str, tuple[str, str, bool]]:
    """name -> (op, source, own_launch) of every CUDA source the course itself holds."""
    out = {}
    for path in instructor_labs(ROOT / "labs").values():
        for cell in read(path).cells:
            answer = lab_meta(cell).get("answer", "")
            if answer.endswith("-cuda"):
                namespace: dict = {}
                exec(cell.source, namespace)
                out[f"lab:{answer}"] = (answer.removesuffix("-cuda"), namespace["CUDA_SOURCE"], False)
    for path in sorted(ROOT.glob("ops/*/steps/*.cu")):
        out[f"step:{path.parts[-3]}/{path.name}"] = (path.parts[-3], path.read_text(), True)
    for folder in ("cuda_faults", "mistakes", "control"):
        for path in sorted((ROOT / "tests" / "labs" / folder).glob("*.py")):
            text = path.read_text()
            check = re.search(r"^# check: (\w+) ?(\w*)", text, re.M)
            if "CUDA_SOURCE" not in text or (check and check[1] != "cuda"):
                continue
            namespace: dict = {}
            exec(text, namespace)  # the headers are comments; the body defines CUDA_SOURCE
            out[f"{folder}:{path.stem}"] = (check[2] if check else "copy", namespace["CUDA_SOURCE"], False)
    return out


def passes(tmp: Path, op: str, source: str, own_launch: bool = False, kinds=None) -> list:
    """The translation units of each build, written under ``tmp``, as cuda_build.Pass."""
    kinds = kinds or (("nvcc-device", "nvcc-host", "cpu") if HAS_NVCC else ("cpu",))
    unit = tmp / f"unit-{abs(hash((op, source, own_launch)))}"
    (unit.with_suffix(".cu")).write_text(cuda_build.full_source(op, source, own_launch))
    (unit.with_suffix(".cc")).write_text(cuda_cpu.full_source(op, source, own_launch))
    return [cuda_build.Pass(k, unit.with_suffix(".cc" if k == "cpu" else ".cu")) for k in kinds]


HONEST = honest_kernels()


def test_the_course_has_kernels_to_check():
    kinds = {name.split(":")[0] for name in HONEST}
    assert {"lab", "step", "cuda_faults", "mistakes", "control"} <= kinds, kinds
    assert sum(name.startswith("lab:") for name in HONEST) == len(OPERATORS)  # a CUDA answer per lab


@pytest.mark.parametrize("name", sorted(HONEST))
def test_the_courses_own_kernels_pass(name, tmp_path):
    op, source, own_launch = HONEST[name]
    start = time.perf_counter()
    problems = cuda_build.source_problems(source, passes(tmp_path, op, source, own_launch))
    assert problems == [], f"{name}: {problems}"
    print(f"{name}: checked in {(time.perf_counter() - start) * 1000:.0f} ms")


# name -> (the attack, what the refusal must say); each attack sits on line 3 of CUDA_SOURCE
ATTACKS = {
    "pasted_attribute": ("#define CAT(a, b) a##b\nCAT(__attri, bute__)((constructor)) static void f() {}\n",
                         ["line 3: `##` in the macro CAT", "line 4: `__attribute__((constructor))` (after macro expansion)"]),
    "gnu_constructor": ("[[gnu::constructor]] static void f() {}\n", ["line 3: `[[ ... ]]`"]),
    "using_gnu": ("[[using gnu: constructor]] static void f() {}\n", ["line 3: `[[ ... ]]`"]),
    "spaced_brackets": ("[ [gnu::constructor] ] static void f() {}\n", ["line 3: `[[ ... ]]`"]),
    "digraph_brackets": ("<:<:gnu::constructor:>:> static void f() {}\n", ["line 3: `[[ ... ]]`"]),
    "attribute": ("__attribute__((constructor)) static void f() {}\n", ["line 3: `__attribute__`"]),
    "spliced_attribute": ("__attri\\\nbute__((constructor)) static void f() {}\n", ["line 3: `__attribute__`"]),
    "annotate": ("__annotate__(constructor) static void f() {}\n", ["line 3: `__annotate__` is a macro"]),
    "section": ("__declspec(dllexport) int v;\n", ["line 3: `__declspec`"]),
    "digraph_include": ("%:include <cstdlib>\n", ["line 3: `#include <cstdlib>`", "includes nothing"]),
    "include": ("#include <dlfcn.h>\n", ["line 3: `#include <dlfcn.h>`"]),
    "spaced_include": ("  #  include \"/etc/passwd\"\n", ["line 3: `#include \"/etc/passwd\"`"]),
    "spliced_include": ("#inc\\\nlude <cstdlib>\n", ["line 3: `#include <cstdlib>`"]),
    "macro_include": ("#define H <cstdlib>\n#include H\n", ["line 4: `#include H`"]),
    "include_next": ("#include_next <cuda_runtime.h>\n", ["line 3: `#include_next"]),
    "pragma_operator": ('_Pragma("GCC optimize(\\"O0\\")")\n', ["line 3: `_Pragma`"]),
    "pragma": ("#pragma GCC visibility push(default)\n", ["line 3: `#pragma GCC visibility push(default)`",
                                                          "only pragma"]),
    "pragma_once": ("#pragma once\n", ["line 3: `#pragma once`"]),
    "line": ('#line 1 "launcher_added_by_the_lab"\n', ["line 3: `#line`"]),
    "linemarker": ('# 1 "launcher_added_by_the_lab"\n', ["line 3: `#1`"]),
    "extern_c": ('extern "C" void* dlsym(void*, const char*);\n', ['line 3: `extern "C"`']),
    "asm": ('static void f() { asm("nop"); }\n', ["line 3: `asm`: inline assembly"]),
    "gnu_asm": ('static void f() { __asm__ __volatile__("nop"); }\n', ["line 3: `__asm__`"]),
    "builtin": ("static void* f() { return __builtin_return_address(0); }\n", ["line 3: `__builtin_return_address`"]),
    "raw_string": ('static const char* s = R"(x)";\n', ["line 3: a raw string literal"]),
    "ifdef_cpu": ("#ifdef __CUDA_ON_CPU__\n#endif\n", ["line 3: `#ifdef __CUDA_ON_CPU__` tests __CUDA_ON_CPU__"]),
    "if_header_macro": ("#if defined(FLT_MAX)\n#endif\n", ["line 3: `#if defined(FLT_MAX)` tests FLT_MAX"]),
    "if_version": ("#if CUDART_VERSION >= 12000\n#endif\n", ["line 3:", "tests CUDART_VERSION"]),
    "if_through_a_macro": ("#define ON_CPU FLT_MAX\n#if ON_CPU\n#endif\n", ["line 4: `#if ON_CPU` tests ON_CPU"]),
    "defined_in_a_macro": ("#define D defined(threadIdx)\n", ["line 3: `defined` in the macro D"]),
    "has_include": ("#if __has_include(<crt/host_defines.h>)\n#endif\n", ["line 3: `__has_include`"]),
    "base_file": ("static const char* f = __BASE_FILE__;\n", ["line 3: `__BASE_FILE__`"]),
    "counter": ("static int c = __COUNTER__;\n", ["line 3: `__COUNTER__`"]),
    "sanitizer_macro": ("static int s = __SANITIZE_THREAD__;\n", ["line 3: `__SANITIZE_THREAD__` is a macro"]),
    "nvcc_version": ("static int v = __CUDACC_VER_MAJOR__;\n", ["line 3: `__CUDACC_VER_MAJOR__` is a macro"]),
    "pretty_function": ("__device__ const char* f() { return __PRETTY_FUNCTION__; }\n",
                        ["line 3: `__PRETTY_FUNCTION__`"]),
    "stringize": ("#define STR(x) #x\n", ["line 3: `#` in the macro STR"]),
    "redefine_a_header_macro": ("#define threadIdx blockIdx\n", ["line 3: `#define threadIdx`"]),
    "undefine_a_header_macro": ("#undef printf\n", ["line 3: `#undef printf`"]),
    "reserved_macro_name": ("#define __CUDA_ON_CPU__ 1\n", ["line 3: `#define __CUDA_ON_CPU__`"]),
    "computed_goto": ("__device__ void f(void* p) { goto *p; }\n", ["line 3: `goto *`"]),
    # keywords as macros rewrite the lab's launcher, which follows the student's text: `return` into a call
    # of host code computing the answer on the CPU (a kernel that did nothing scored 4/4), `unsigned` into
    # another grid; no keyword is a macro's name, used by the launcher or not
    "keyword_return": ("#define return return host_copy() +\nstatic int host_copy() { return 0; }\n",
                       ["line 3: `#define return`: return is a C++ keyword"]),
    "keyword_unsigned": ("#define unsigned unsigned)1+0*(unsigned\n", ["line 3: `#define unsigned`"]),
    "keyword_spliced": ("#def\\\nine if while\n", ["line 3: `#define if`"]),
    "keyword_undef": ("#undef int\n", ["line 3: `#undef int`"]),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_attack_is_refused_with_its_line(name):
    attack, says = ATTACKS[name]
    source = "// a student's kernel\n\n" + attack + KERNEL
    with pytest.raises(AssertionError) as e:
        cuda_cpu.build_library("copy", source, check=True)
    message = str(e.value)
    assert message.startswith("the CUDA source was refused"), message
    missing = [s for s in says if s not in message]
    assert not missing, f"{name}: the refusal lacks {missing}:\n{message}"


@needs_nvcc
def test_nvccs_build_refuses_as_the_cpu_build_does():
    attack, says = ATTACKS["pasted_attribute"]
    with pytest.raises(AssertionError) as e:
        cuda_build.compile_check("copy", "// a student's kernel\n\n" + attack + KERNEL)
    assert all(s in str(e.value) for s in says), str(e.value)


# name -> (the attack, what layer 2 says, the kinds of pass that see it): macros and spellings that
# only the preprocessor resolves; layer 1 refuses them too, here layer 2 is asked alone
EXPANDED = {
    "pasted_attribute": ("#define CAT(a, b) a##b\nCAT(__attri, bute__)((constructor)) static void f() {}\n",
                         (4, "`__attribute__((constructor))` (after macro expansion)"), ("nvcc-device", "nvcc-host", "cpu")),
    "spliced_attribute": ("__attri\\\nbute__((constructor)) static void f() {}\n", (3, "`__attribute__((constructor))`"),
                          ("nvcc-device", "nvcc-host", "cpu")),
    "annotate": ("__annotate__(constructor) static void f() {}\n", (3, "`__attribute__((constructor))`"),
                 ("nvcc-device", "nvcc-host")),
    "host_pass_only": ("#ifndef __CUDA_ARCH__\n__annotate__(constructor) static void f() {}\n#endif\n",
                       (4, "`__attribute__((constructor))`"), ("nvcc-host",)),
    "using_gnu": ("[[using gnu: constructor]] static void f() {}\n", (3, "`[[ ... ]]`"), ("nvcc-device", "nvcc-host", "cpu")),
    "digraph_include": ("%:include <cstdlib>\n", (3, "`#include` of cstdlib"), ("nvcc-device", "nvcc-host", "cpu")),
    "macro_include": ("#define H <dlfcn.h>\n#include H\n", (4, "`#include` of dlfcn.h"), ("nvcc-device", "nvcc-host", "cpu")),
    "pragma_operator": ('_Pragma("GCC optimize(\\"O0\\")")\n', (3, '`#pragma GCC optimize("O0")`'),
                        ("nvcc-device", "nvcc-host", "cpu")),
    # (-E drops the blank lines before a rename: the marker does not say which line it replaced)
    "line": ('#line 1 "launcher_added_by_the_lab"\nint v;\n', (None, "a `#line` naming launcher_added_by_the_lab"),
             ("nvcc-device", "nvcc-host", "cpu")),
    "pasted_extern": ('#define EXTERN(l) extern l\nEXTERN("C") void* dlsym(void*, const char*);\n', (4, '`extern "C"`'),
                      ("nvcc-device", "nvcc-host", "cpu")),
    "pasted_asm": ('#define CAT(a, b) a##b\nstatic void f() { CAT(as, m)("nop"); }\n', (4, "`asm` (after macro expansion)"),
                   ("nvcc-device", "nvcc-host", "cpu")),
    "pasted_builtin": ("#define CAT(a, b) a##b\nstatic void* f() { return CAT(__builtin_, frame_address)(0); }\n",
                       (4, "`__builtin_frame_address` (after macro expansion)"), ("nvcc-device", "nvcc-host", "cpu")),
}


@pytest.mark.parametrize("name", sorted(EXPANDED))
def test_the_preprocessed_check_alone_refuses_what_macros_spell(name, tmp_path):
    attack, (line, says), kinds = EXPANDED[name]
    kinds = [k for k in kinds if HAS_NVCC or k == "cpu"]
    if not kinds:
        pytest.skip("nvcc's passes only")
    source = "// a student's kernel\n\n" + attack + KERNEL
    for unit in passes(tmp_path, "copy", source, kinds=kinds):
        found = cuda_build.expanded_problems([unit])
        assert any(line in (ln, None) and says in text for ln, text in found), f"{name} in {unit[0]}: {found}"


def test_the_preamble_headers_may_be_named_again(tmp_path):
    source = "#include <cuda_fp16.h>\n#include <cstdint>\n#include \"cuda_bf16.h\"\n#include <cuda_runtime.h>\n" + KERNEL
    assert cuda_build.source_problems(source, passes(tmp_path, "copy", source)) == []
    planted = tmp_path / "cuda_fp16.h"  # a quoted name is looked for next to the unit first
    planted.write_text("static int planted = 1;\n")
    source = '#include "cuda_fp16.h"\n' + KERNEL
    found = cuda_build.expanded_problems(passes(tmp_path, "copy", source, kinds=("cpu",)))
    assert any("`#include` of cuda_fp16.h" in text for _, text in found), found


LEGITIMATE = r"""
// comments may say asm, __attribute__((constructor)), #include <cstdlib> or [[gnu::used]]
/* and so may
   #include <dlfcn.h> block comments */
#define TILE 32
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
#ifndef UNROLL
#define UNROLL 4
#endif
#if UNROLL > 2 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700 && defined __CUDACC__ && __NVCC__
#define WIDE 1
#endif
#include <cuda_fp16.h>

__device__ __forceinline__ float twice(float v) { return 2.f * v; }

template <typename T>
__global__ void __launch_bounds__(256) copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  extern __shared__ float spare[];
  __shared__ int lanes[TILE];
  const char* words = "__attribute__ asm #include";
  (void)words; (void)spare;
  lanes[threadIdx.x % TILE] = (int)CEIL_DIV(n, TILE);
  __syncthreads();
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
#pragma unroll
    for (int k = 0; k < 1; ++k) y[i] = x[i];
#pragma unroll 4
    for (int k = 0; k < lanes[lanes[0] % TILE] * 0; ++k) y[i] = x[static_cast<::int64_t>(i)];
  }
}
"""


def test_legitimate_spellings_pass(tmp_path):
    assert cuda_build.source_problems(LEGITIMATE, passes(tmp_path, "copy", LEGITIMATE)) == []


def test_a_source_past_the_size_limit_is_refused():
    with pytest.raises(AssertionError, match="a lab kernel is a few KB"):
        cuda_build.check_source("// padding\n" * 30000 + KERNEL)


# ---- the objects: nothing runs when the library is loaded but the toolchain's own ----

STATIC_INITIALIZER = """
static volatile int loaded;
static struct Forge {
  Forge() { loaded = 1; }  // would run when the library is loaded
} forged;
""" + EMPTY_KERNEL


def test_a_static_initializer_passes_the_source_check_and_is_refused_in_the_cpu_object():
    cuda_build.check_source(STATIC_INITIALIZER)
    lib, obj = cuda_cpu.build_library("copy", STATIC_INITIALIZER, check=True)
    problems = cuda_cpu.host_problems(obj)
    assert problems and "runs code of its own when the library is loaded" in problems[-1], problems
    assert "struct S { S() {...} } s;" in problems[-1]


@needs_nvcc
def test_a_static_initializer_is_refused_in_nvccs_object():
    problems = cuda_build.host_problems(cuda_build.compile_check("copy", STATIC_INITIALIZER))
    assert any("runs code of its own when the library is loaded" in p for p in problems), problems


def test_a_clean_kernels_objects_hold_only_the_toolchains_startup():
    lib, obj = cuda_cpu.build_library("copy", KERNEL, check=True)
    assert cuda_cpu.host_problems(obj) == []
    sections, symbols, relocations = cuda_build._readelf(obj)
    assert [n for n, *_ in sections.values() if n.startswith(".init_array")] == [".init_array.00099"]


@needs_nvcc
def test_nvccs_clean_object_and_library_hold_only_the_toolchains_startup():
    assert cuda_build.host_problems(cuda_build.compile_check("copy", KERNEL)) == []
    assert cuda_build.host_problems(cuda_build.build_library("copy", KERNEL, capability=(9, 0))) == []
    library = cuda_build.build_library("copy", STATIC_INITIALIZER, capability=(9, 0))
    assert any("runs code of its own" in p for p in cuda_build.host_problems(library))


# What only a skipped source check would let through: each compiled here without it
UNCHECKED = {
    "constructor": "static volatile int v;\n__attribute__((constructor)) static void f() { v = 1; }\n",
    "priority_constructor": "static volatile int v;\n__attribute__((constructor(101))) static void f() { v = 1; }\n",
    "destructor": "static volatile int v;\n__attribute__((destructor)) static void f() { v = 1; }\n",
    "ctors_section": "static volatile int v;\nstatic void f() { v = 1; }\n"
                     "__attribute__((section(\".ctors\"), used)) static void (*p)() = f;\n",
    "ifunc": 'extern "C" { static int impl() { return 1; } static void* pick() { return (void*)impl; }\n'
             'int chosen() __attribute__((ifunc("pick"))); }\n',
    "init_section": "static volatile int v;\n__attribute__((section(\".init\"), used)) static void f() { v = 1; }\n",
}


@pytest.mark.parametrize("name", sorted(UNCHECKED))
def test_code_run_at_load_is_refused_however_it_was_spelled(name, tmp_path):
    unit = tmp_path / "unit.cc"
    unit.write_text(cuda_cpu.full_source("copy", UNCHECKED[name] + EMPTY_KERNEL))
    obj = tmp_path / "unit.o"
    subprocess.run([cuda_cpu._gxx(), *cuda_cpu.STUDENT_FLAGS, "-I", str(cuda_cpu.INCLUDE), "-x", "c++", "-c", str(unit),
                    "-o", str(obj)], check=True, capture_output=True)
    problems = cuda_cpu.host_problems(obj)
    assert problems and any(("runs code of its own" in p) or ("IFUNC" in p) for p in problems), f"{name}: {problems}"


# On the CPU the kernel runs as host code: a call through a computed address (dlsym found at a
# fixed offset from memcpy's address, say) reaches what no import names
FUNCTION_POINTER = """
typedef int (*Call)(const char*);
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  Call call = (Call)((const char*)(const void*)&memcpy + n);
  if (n == 12345) call("x");
}
"""
SWITCHES = """
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    switch ((int)(i % 8)) {  // dense enough for a jump table, had the CPU build not turned them off
      case 0: y[i] = x[i]; break;
      case 1: y[i] = x[i] + T(0.f); break;
      case 2: y[i] = x[i] * T(1.f); break;
      case 3: y[i] = T(float(x[i])); break;
      case 4: y[i] = x[i] - T(0.f); break;
      case 5: y[i] = T(float(x[i]) * 1.f); break;
      case 6: y[i] = T(float(x[i]) + 0.f); break;
      default: y[i] = x[i];
    }
  }
}
"""


def test_a_call_through_a_computed_address_is_refused_in_the_cpu_object():
    cuda_build.check_source(FUNCTION_POINTER)  # plain C++: the source check cannot see it
    _, obj = cuda_cpu.build_library("copy", FUNCTION_POINTER, check=True)
    assert any("calls or jumps through a computed address" in p for p in cuda_cpu.host_problems(obj))
    _, obj = cuda_cpu.build_library("copy", SWITCHES, check=True)
    assert cuda_cpu.host_problems(obj) == []
    assert torch.equal(_run_on_cpu(SWITCHES), torch.arange(1, 1001, dtype=torch.float32))


# ---- the CPU build: a kernel cannot tell it from a GPU's by its macros ----

TELL_TALE = re.compile(r"_*(CUDA|NVCC|cuda|nvcc|CUDACC|NV_|SANITIZE)")


def test_the_cpu_build_shows_the_macros_nvccs_device_pass_shows():
    macros = cuda_build.environment_macros()
    cpu = macros["cpu"]
    assert "__CUDA_ON_CPU__" not in cpu
    assert not [n for n in cpu if n.lower().startswith(("__cuda_cpu", "cuda_cpu", "__cuda_on"))], "our header's own names"
    for name in cuda_build.PARITY_MACROS:
        assert cpu.get(name, "").strip() in ("1", "900"), name
    if "nvcc-device" not in macros:
        pytest.skip("no nvcc to compare with")
    device, host = macros["nvcc-device"], macros["nvcc-host"]
    for name in cuda_build.PARITY_MACROS:
        assert cpu[name].strip() == device[name].strip(), name
    assert "__CUDA_ARCH__" not in host and host["__CUDACC__"].strip() == "1"
    differ = sorted({n for n in set(device) ^ set(cpu) if TELL_TALE.match(n)}
                    | {n for n in set(device) & set(cpu) if TELL_TALE.match(n) and device[n] != cpu[n]})
    assert "__SANITIZE_THREAD__" in differ and "__CUDACC_VER_MAJOR__" in differ  # the comparison sees them
    not_refused = []
    for name in differ:
        if not cuda_build.written_problems(f"#ifdef {name}\n#endif\n" + KERNEL):
            not_refused.append(f"#ifdef {name}")
        if cuda_build._reserved(name) and name not in cuda_build.API_MACROS and \
                not cuda_build.written_problems(f"static int v = {name};\n" + KERNEL):
            not_refused.append(name)
    assert not not_refused, f"a kernel could test these: {not_refused}"


def _run_on_cpu(source: str) -> torch.Tensor:
    lib, _ = cuda_cpu.build_library("copy", source)  # no check: what the build itself does with the source
    x = torch.arange(1, 1001, dtype=torch.float32)
    y = torch.zeros_like(x)
    cuda_cpu.CpuLab("copy", lib).run([x], y, "copy")
    return y


STORE_IF = """
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {{
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {{
#{directive}
    y[i] = x[i];
#endif
  }}
}}
"""


def test_ifdef_cuda_on_cpu_is_refused_and_its_branch_not_taken_on_the_cpu():
    source = STORE_IF.format(directive="ifdef __CUDA_ON_CPU__")
    with pytest.raises(AssertionError, match="tests __CUDA_ON_CPU__"):
        cuda_build.check_source(source)
    assert torch.count_nonzero(_run_on_cpu(source)) == 0  # as on a GPU: nothing stored


def test_the_cpu_build_compiles_a_kernel_as_nvccs_device_pass_does():
    for directive, stores in (("ifdef __CUDA_ARCH__", True), ("ifndef __CUDA_ARCH__", False),
                              ("if defined(__CUDACC__) && defined(__NVCC__)", True), ("if __CUDA_ARCH__ >= 900", True)):
        source = STORE_IF.format(directive=directive)
        cuda_build.check_source(source)  # allowed: these are the same on a GPU
        assert bool(torch.count_nonzero(_run_on_cpu(source))) == stores, directive


# ---- the cost: preprocessing once per text ----

def test_the_check_is_cached_by_hash(tmp_path, monkeypatch):
    source = KERNEL + "// cached\n"
    units = passes(tmp_path, "copy", source)
    start = time.perf_counter()
    assert cuda_build.source_problems(source, units) == []
    first = time.perf_counter() - start

    def no_process(*args, **kwargs):
        raise AssertionError("preprocessed again")

    monkeypatch.setattr(cuda_build.subprocess, "Popen", no_process)
    start = time.perf_counter()
    assert cuda_build.source_problems(source, units) == []
    again = time.perf_counter() - start
    for key in [k for k in cuda_build._CHECKED if len(k) == 24]:  # the passes' results, kept in memory
        monkeypatch.delitem(cuda_build._CHECKED, key)
    assert cuda_build.source_problems(source, units) == []  # from CACHE on disk
    print(f"check: {first * 1000:.0f} ms, again {again * 1000:.1f} ms")
    assert again < 0.05


# A kernel's parameters as the launcher meets them: a class type (its converting constructor runs on
# the host at every launch; tests/labs/hostile/cuda_param_constructor.py is the attack), a reference,
# a union, an extra parameter with a default argument (evaluated on the host). Refused by the
# launcher's static_assert in every build; plain spellings of the lab's parameters still pass.
HOST_CODE_PARAMETERS = {
    "class": "struct Len { int64_t v; __host__ __device__ Len(int64_t x) : v(x) {} };\n"
             "template <typename T> __global__ void copy_kernel(const T* x, T* y, Len n) {}\n",
    "reference": "template <typename T> __global__ void copy_kernel(const T* x, T* y, const int64_t& n) {}\n",
    "union": "union U { int64_t v; };\ntemplate <typename T> __global__ void copy_kernel(const T* x, T* y, U n) {}\n",
    "default_argument": "static int seen() { return 1; }\n"
                        "template <typename T> __global__ void copy_kernel(const T* x, T* y, int64_t n, int k = seen()) {}\n",
}
PLAIN_PARAMETERS = ("template <typename T>\n__global__ void copy_kernel(const T* __restrict__ x, T* y, int n) {}\n"
                    "enum class Kind : int { a };\n")


@pytest.mark.parametrize("name", sorted(HOST_CODE_PARAMETERS))
def test_a_kernel_parameter_that_runs_host_code_is_refused_in_the_cpu_build(name):
    with pytest.raises(Exception, match="copy_kernel must take exactly the lab's arguments, each a number or a pointer"):
        cuda_cpu.build_library("copy", HOST_CODE_PARAMETERS[name], check=True)


@needs_nvcc
@pytest.mark.parametrize("name", sorted(HOST_CODE_PARAMETERS))
def test_a_kernel_parameter_that_runs_host_code_is_refused_by_nvcc(name):
    with pytest.raises(cuda_build.CompileError, match="copy_kernel must take exactly the lab's arguments"):
        cuda_build.compile_check("copy", HOST_CODE_PARAMETERS[name])


def test_plain_parameters_pass_the_launchers_assert():
    cuda_cpu.build_library("copy", PLAIN_PARAMETERS, check=True)
    if HAS_NVCC:
        cuda_build.compile_check("copy", PLAIN_PARAMETERS)


def test_the_launchers_traits_are_named_after_the_students_text():
    """A text cannot name the traits to specialise or #define them: their names hash the text."""
    a, b = cuda_build.full_source("copy", KERNEL), cuda_build.full_source("copy", KERNEL + "\n")
    names = [set(re.findall(r"lab_plain_kernel_\w+", s)) for s in (a, b)]
    assert len(names[0]) == 1 and names[0] != names[1], names
