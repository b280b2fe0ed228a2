"""The grader's allowlist of TileLang programs (grader/program_check.py), on the CPU, no sandbox:

- every instructor solution (labs/*.ipynb answer cells that hold a T.prim_func) and every chapter
  program (ops/*/steps/*.py, ops/*/tilelang/*.py), for float32/float16/bfloat16 and gpu True and
  False, passes check_program, survives the JSON round trip of the exported artifact
  (load_program), and comes back with the grader's global_symbol;
- the lab solutions compile with compile_checked for the C target (the generated source passing
  the scan on the way) and compute the right answer after the reset; their CUDA sources (sm_90,
  lowered here without a GPU; nvcc is never run) pass the scan too;
- each attack is refused with its name in the message: T.attr "pragma_import_c" (which ran Python
  inside the grader: tests/labs/hostile/tilelang_pragma_import_c.py), a crafted global_symbol,
  T.call_extern, T.call_packed, a StringImm in an evaluate, unknown attr / annotation / function
  attribute keys, T.import_source, T.Kernel(prelude=...), names that are not identifiers;
- check_generated_source refuses a source with an extra #include, __attribute__((constructor)),
  [[gnu::constructor]], line splices, digraphs, asm and foreign string literals.
"""

import inspect
import json
import linecache
from pathlib import Path

import pytest
import torch

pytest.importorskip("tilelang", reason="the labs' TileLang parts need tilelang (requirements.txt)")

import tilelang.language as T  # noqa: E402
from tilelang import tvm  # noqa: E402

from operator_runtime._internal.tilelang_backend import TL_DTYPES  # noqa: E402
from operator_course import lab  # noqa: E402
from operator_course.lab import kernels
from operator_course.grader import program_check  # noqa: E402
from operator_course.lab.judge import judge, lab_cases  # noqa: E402
from operator_course.grader.notebook import lab_meta, read  # noqa: E402
from operator_runtime_testing.operators import OPERATORS  # noqa: E402
from operator_course.grader.program_check import (GLOBAL_SYMBOL, ProgramRefused, check_generated_source, check_program,
                                                  compile_checked, load_program)

ROOT = Path(__file__).resolve().parents[2]
DTYPES = ("float32", "float16", "bfloat16")
SM90 = {"kind": "cuda", "arch": "sm_90"}


# ---- the programs the allowlist was collected from ---------------------------------------------

def lab_solutions() -> dict[str, object]:
    """'<lab>:<answer id>' -> the instructor's program factory, for every answer cell of
    labs/*.ipynb that defines a T.prim_func (the TileLang answers; the others are CUDA sources)."""
    out = {}
    for path in sorted((ROOT / "labs").glob("*.ipynb")):
        for cell in read(path).cells:
            answer = lab_meta(cell).get("answer")
            if answer is None or "@T.prim_func" not in cell.source:
                continue
            name = f"<{path.stem}:{answer}>"  # T.prim_func reads its function's source: give it one
            linecache.cache[name] = (len(cell.source), None, cell.source.splitlines(True), name)
            scope = {"T": T, "lab": lab, "torch": torch}
            exec(compile(cell.source, name, "exec", dont_inherit=True), scope)  # noqa: S102 - the course's own solutions
            factories = [v for k, v in scope.items() if k.endswith("_program") and callable(v)]
            assert len(factories) == 1, f"{path.name} {answer}: expected one *_program factory"
            out[f"{path.stem}:{answer}"] = factories[0]
    return out


def _module(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"program_check_{path.parent.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chapter_programs(path: Path) -> list[tuple[str, object]]:
    """(label, thunk) for every program of a chapter file: a step's program(dtype, gpu), or each
    *_program factory of an operator's TileLang module (its strategies and tile configs too)."""
    module = _module(path)
    out = []
    if path.parent.name == "steps":
        for dtype in DTYPES:
            for gpu in (True, False):
                out.append((f"{dtype},{gpu}", lambda d=dtype, g=gpu: module.program(d, g)))
        return out
    record = OPERATORS.get(path.parent.parent.name)  # ops/<op>/tilelang/<file>.py
    gpu_dtypes = {TL_DTYPES[d] for d in record.tilelang_dtypes[0]} if record and record.tilelang_dtypes else None
    for name, factory in vars(module).items():
        if not (name.endswith("_program") and inspect.isfunction(factory) and factory.__module__ == module.__name__):
            continue
        params = inspect.signature(factory).parameters
        for dtype in DTYPES:
            for gpu in (True, False):
                if not gpu and name.endswith(("_columns_program", "_row_pieces_program", "_partials_program")):
                    continue  # GPU kernels: they refuse the C target themselves
                if gpu and gpu_dtypes is not None and dtype not in gpu_dtypes:
                    continue  # the GPU program refuses this dtype, as the runtime does (the record's tilelang_dtypes)
                kw = {"in_dtype": dtype, "out_dtype": dtype} if "in_dtype" in params else {"dtype": dtype}
                kw["gpu"] = gpu
                if "rank" in params:
                    kw["rank"] = 2
                variants = [{}]
                if "strategy" in params:
                    variants = [{"strategy": s} for s in ("cached", "online", "packed")]
                if "config" in params and gpu:
                    variants = [{"config": c} for c in module.CONFIGS]
                if "a_inner" in params:  # vector_add's broadcast program: each operand's columns adjacent or repeated
                    variants = [{"a_inner": a, "b_inner": b} for a, b in ((1, 1), (1, 0), (0, 1))]
                if "partials" in params and gpu:  # reduce_sum's columns: whole, or pieces into partials
                    variants = [{"partials": False}, {"partials": True}]
                if "d" in params:  # attention's dense program: a GPU program of 16-bit dtypes, per head dim
                    if not gpu or dtype == "float32":
                        continue
                    variants = [{"d": d} for d in module.DENSE_HEAD_DIMS]
                for extra in variants:
                    out.append((f"{name}{extra or ''}[{dtype},{gpu}]", lambda f=factory, kw={**kw, **extra}: f(**kw)))
    return out


SOLUTIONS = lab_solutions()
CHAPTER_FILES = sorted(ROOT.glob("ops/*/steps/*.py")) + sorted(ROOT.glob("ops/*/tilelang/*.py"))


def _accepted(program):
    checked = check_program(program)
    assert checked.attrs["global_symbol"] == GLOBAL_SYMBOL
    assert dict(checked.attrs) == {"global_symbol": GLOBAL_SYMBOL}
    loaded = load_program(tvm.ir.save_json(program))  # what the grader does with the exported artifact
    assert tvm.ir.structural_equal(loaded, checked)
    return checked


@pytest.mark.parametrize("answer", sorted(SOLUTIONS))
def test_every_lab_solution_passes_the_check(answer):
    for dtype in DTYPES:
        for gpu in (True, False):
            _accepted(SOLUTIONS[answer](dtype, gpu))


@pytest.mark.parametrize("path", CHAPTER_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_chapter_program_passes_the_check(path):
    programs = chapter_programs(path)
    assert programs, f"{path}: no programs found"
    for label, make in programs:
        try:
            _accepted(make())
        except ProgramRefused as e:
            pytest.fail(f"{path.name} {label}: {e}")


def test_the_allowlisted_operations_exist():
    for name in program_check.OPS:
        tvm.ir.Op.get(name)  # raises for a name TVM does not register (a typo would allow nothing)


# ---- compiled and run after the check -----------------------------------------------------------

def _run_cases(kernel, op: str, dtype: str) -> int:
    n = 0
    for case in lab_cases(op, "cpu", lang="tilelang"):
        if TL_DTYPES[case.dtype] != dtype:
            continue
        buffer, out = case.output(op, "cpu")
        kernels.run_tilelang(kernel, op, case.inputs_on("cpu"), out)
        judge(op, "TileLang", case, buffer)
        n += 1
    return n


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_lab_1_copy_compiles_checked_for_the_c_target_and_is_right(dtype):
    kernel = compile_checked(SOLUTIONS["01_copy:copy-tilelang"](dtype, False), "cpu")
    source = kernel.adapter.lib_code
    assert f"{GLOBAL_SYMBOL}_kernel(" in source and "copy_kernel" not in source  # the grader's name
    assert _run_cases(kernel, "copy", dtype) > 5


OPS_OF = {lab: lab.split("_", 1)[1] for lab in {a.split(":")[0] for a in SOLUTIONS}}  # labs/NN_<op>.ipynb


@pytest.mark.parametrize("answer", [a for a in sorted(SOLUTIONS) if not a.startswith("01_copy:")])
def test_every_lab_solution_compiles_checked_for_the_c_target_and_is_right(answer):
    kernel = compile_checked(SOLUTIONS[answer]("float32", False), "cpu")
    assert _run_cases(kernel, OPS_OF[answer.split(":")[0]], "float32") > 3


class _Stop(Exception):
    """Raised in place of TileLang's compile: the source got past the scan."""


@pytest.fixture
def no_compiler(monkeypatch):
    """compile_checked up to the compiler: LibraryGenerator.compile_lib (which the scan wraps)
    raises _Stop with the source instead of compiling; CUDA lowers for sm_90 without a GPU."""
    from tilelang.jit.adapter import libgen

    def stop(self, timeout=None):
        raise _Stop(self.lib_code)

    monkeypatch.setattr(libgen.LibraryGenerator, "compile_lib", stop)
    monkeypatch.setattr(kernels, "target", lambda device: SM90 if device == "cuda" else "c")


def _source(program, device: str) -> str:
    with pytest.raises(_Stop) as stopped:
        compile_checked(program, device)
    return stopped.value.args[0]


@pytest.mark.parametrize("answer", sorted(SOLUTIONS))
def test_the_cuda_sources_of_the_lab_solutions_pass_the_scan(no_compiler, answer):
    source = _source(SOLUTIONS[answer]("float16", True), "cuda")  # the scan ran (and passed) first
    assert "__global__" in source
    assert f"{GLOBAL_SYMBOL}_kernel" in source


# ---- attacks: each refused, named ---------------------------------------------------------------

BOOT = r'''
extern "C" int PyRun_SimpleString(const char*);
__attribute__((constructor)) static void lab_boot(void) { PyRun_SimpleString("print('pwned')"); }
'''


def pragma_import_c():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            T.attr(0, "pragma_import_c", BOOT)
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i] * 2.0

    return copy


def plain_copy():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def crafted_global_symbol():
    return plain_copy().with_attr("global_symbol", 'lab(void); __attribute__((constructor)) void f(void) {} int g')


def call_extern():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            T.evaluate(T.call_extern("int32", "system", "touch /tmp/pwned"))
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def call_packed():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            T.evaluate(T.call_packed("runtime.SystemLib", X.data))
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def call_llvm_intrin():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = T.call_intrin("float32", tvm.ir.Op.get("tirx.call_llvm_pure_intrin"),
                                                     T.uint32(1), T.uint32(1), X[bx * 1024 + i])

    return copy


def string_in_evaluate():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            T.evaluate(T.StringImm("int pasted = 1;"))
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def unknown_attr():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            T.attr(0, "tl.unknown_key", 1)
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def import_source():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            T.import_source(BOOT)
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def kernel_prelude():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024), prelude=BOOT) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def loop_pragma():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            for i in T.serial(1024, annotations={"pragma_import_c": BOOT}):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def block_annotation():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            T.sblock_attr({"tl.mystery": "text"})
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def func_attr():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        T.func_attr({"tilelang_compile_flags": ["-include", "/etc/passwd"]})
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def pasted_name():
    n = tvm.tirx.Var("n){return 0;}int32_t f(int64_t n", "int64")  # T.dynamic splits names at spaces

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def crafted_swizzle():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024), threads=128) as bx:
            T.attr(None, "threadblock_swizzle_pattern", T.tvm_tuple("system", 4))
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def crafted_reduce_kind():
    rows = T.dynamic("rows", "int64")

    @T.prim_func
    def reduce(X: T.Tensor((rows, 256), "float32"), Y: T.Tensor((rows,), "float32")):
        with T.Kernel(rows) as r:
            tile = T.alloc_local((256,), "float32")
            acc = T.alloc_local((1,), "float32")
            T.copy(X[r, 0], tile)
            T.evaluate(T.call_intrin("handle", tvm.ir.Op.get("tl.tileop.reduce"), tile.access_ptr("r"),
                                     acc.access_ptr("w"), "sum); system(\"x\"", 0, True))
            Y[r] = acc[0]

    return reduce


def assert_message():
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024)) as bx:
            T.Assert(n > 0, "\"); system(\"x")
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


ATTACKS = {  # name: (program, words the message must hold)
    "pragma_import_c": (pragma_import_c, ["T.attr", "pragma_import_c"]),
    "global_symbol": (crafted_global_symbol, ["global_symbol", "not a plain name"]),
    "call_extern": (call_extern, ["T.call_extern", "system"]),
    "call_packed": (call_packed, ["T.call_packed", "runtime.SystemLib"]),
    "call_llvm_pure_intrin": (call_llvm_intrin, ["T.call_llvm_pure_intrin"]),
    "string_in_evaluate": (string_in_evaluate, ["int pasted = 1;", "T.StringImm"]),
    "unknown_attr": (unknown_attr, ["T.attr", "tl.unknown_key"]),
    "import_source": (import_source, ["block annotation", "pragma_import_c", "T.import_source"]),
    "kernel_prelude": (kernel_prelude, ["pragma_import_c", "prelude"]),
    "loop_pragma": (loop_pragma, ["loop annotation", "pragma_import_c"]),
    "block_annotation": (block_annotation, ["block annotation", "tl.mystery"]),
    "func_attr": (func_attr, ["function attribute", "tilelang_compile_flags"]),
    "pasted_name": (pasted_name, ["variable named", "not a plain identifier"]),
    "crafted_swizzle": (crafted_swizzle, ["threadblock_swizzle_pattern"]),
    "crafted_reduce_kind": (crafted_reduce_kind, ["system", "tl.tileop.reduce"]),
    "assert_message": (assert_message, ["T.Assert"]),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_each_attack_is_refused_by_name(attack):
    make, words = ATTACKS[attack]
    program = make()
    for check in (lambda: check_program(program), lambda: load_program(tvm.ir.save_json(program))):
        with pytest.raises(ProgramRefused) as refused:
            check()
        message = str(refused.value)
        for word in words:
            assert word in message, (word, message)
        assert "lab kernels may only use TileLang's tile operations" in message


def test_a_refused_program_never_reaches_the_compiler(monkeypatch):
    from tilelang.jit.adapter import libgen

    def compile_lib(self, timeout=None):
        raise AssertionError("compiled a refused program")

    monkeypatch.setattr(libgen.LibraryGenerator, "compile_lib", compile_lib)
    for attack in ("pragma_import_c", "global_symbol", "call_extern", "import_source"):
        with pytest.raises(ProgramRefused):
            compile_checked(ATTACKS[attack][0](), "cpu")


def test_the_source_scan_alone_stops_the_pragma_program(monkeypatch):
    """Second line: were check_program bypassed, the pasted C++ would still not be compiled."""
    from tilelang.jit.adapter import libgen
    from tilelang.jit.kernel import JITKernel

    from operator_course.lab.cpu_tiles import prepare_for_cpu

    monkeypatch.setattr(libgen.LibraryGenerator, "compile_lib",
                        lambda self, timeout=None: pytest.fail("the pasted source reached g++"))
    with pytest.raises(ProgramRefused) as refused, program_check._scan_before_compiling("c"):
        JITKernel(prepare_for_cpu(pragma_import_c()), execution_backend="cython", target="c",
                  pass_configs=dict(kernels.PASS_CONFIGS))
    assert "generated" in str(refused.value)


def test_the_hostile_corpus_files_are_refused():
    """tests/labs/hostile/tilelang_*.py, as the grader receives them (the exported JSON)."""
    from labs.submissions import parse

    for name, word in (("tilelang_pragma_import_c", "pragma_import_c"), ("tilelang_global_symbol", "global_symbol")):
        body = parse(ROOT / "tests" / "labs" / "hostile" / f"{name}.py")["body"]
        filename = f"<hostile {name}>"
        linecache.cache[filename] = (len(body), None, body.splitlines(True), filename)
        scope = {"T": T, "lab": lab, "torch": torch}
        exec(compile(body, filename, "exec", dont_inherit=True), scope)  # noqa: S102 - builds IR only; nothing is compiled
        for dtype in ("float32", "float16"):
            for gpu in (True, False):
                with pytest.raises(ProgramRefused, match=word):
                    load_program(tvm.ir.save_json(scope["copy_program"](dtype, gpu)))


# ---- the exported JSON itself -------------------------------------------------------------------

def test_load_program_refuses_other_objects_before_building_any():
    text = tvm.ir.save_json(plain_copy())
    graph = json.loads(text)
    graph["nodes"].append({"type": "ir.GlobalVar", "data": {"name_hint": 0}})
    with pytest.raises(ProgramRefused, match="another function"):
        load_program(json.dumps(graph))
    graph["nodes"][-1] = {"type": "runtime.Module", "data": {}}
    with pytest.raises(ProgramRefused, match="runtime.Module"):
        load_program(json.dumps(graph))
    with pytest.raises(ProgramRefused, match="not one TVM wrote"):
        load_program("{not json")
    with pytest.raises(ProgramRefused, match="larger"):
        load_program(" " * (program_check.MAX_PROGRAM_JSON + 1))
    with pytest.raises(ProgramRefused, match="not a T.prim_func"):
        check_program(tvm.tirx.IntImm("int32", 1))


# ---- the generated source -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def c_source():
    return compile_checked(plain_copy(), "cpu").adapter.lib_code


def test_a_real_c_source_passes_the_scan(c_source):
    check_generated_source(c_source, "c")
    check_generated_source(c_source.replace("for (", "#pragma unroll 4\n  for (", 1), "c")


@pytest.mark.parametrize("added, word", [
    ("#include <stdlib.h>", "#include <stdlib.h>"),
    ("#include \"/etc/passwd\"", "/etc/passwd"),
    ("#include <tl_templates/cpp/../../../etc/passwd>", "#include"),
    ("__attribute__((constructor)) static void f(void) {}", "__attribute__"),
    ("[[gnu::constructor]] static void f(void) {}", "[["),
    ("<:<:gnu::constructor:>:> static void f(void) {}", "<:"),
    ("%:include <stdlib.h>", "%:"),
    ("static void f(void) __attri\\\nbute__((constructor));", "splice"),
    ("#define CAT(a, b) a##b", "preprocessor line"),
    ("#pragma GCC optimize(\"O0\")", "preprocessor line"),
    ("_Pragma(\"GCC poison x\")", "string literal"),
    ("_Pragma(\"\")", "_Pragma"),
    ("static int x = system(\"\");", "system"),
    ("void f(void) { asm volatile(\"\"); }", "asm"),
    ("static const char *s = \"touch /tmp/pwned\";", "string literal"),
    ("static const char *s = R\"(x)\";", "raw"),
    ("static const char *s = u8\"\";", "prefixed"),
    ("int \\u0061sm;", "backslash"),
    ("int x = 'a';", "character literal"),
    ("int ??= x;", "trigraph"),
    ("int caf\u00e9;", "ASCII"),
    ("int x = PyRun_SimpleString;", "PyRun_SimpleString"),
])
def test_the_scan_refuses_what_tilelang_does_not_write(c_source, added, word):
    with pytest.raises(ProgramRefused) as refused:
        check_generated_source(c_source + "\n" + added + "\n", "c")
    assert word in str(refused.value), str(refused.value)


def test_a_real_cuda_source_passes_the_scan_and_an_extra_include_does_not(no_compiler):
    source = _source(SOLUTIONS["05_matmul:matmul-tilelang"]("float16", True), "cuda")
    check_generated_source(source, "cuda")
    for added in ("#include <dlfcn.h>", "#include <tl_templates/cpp/common.h>",
                  "__host__ __attribute__((constructor)) void f() {}"):
        with pytest.raises(ProgramRefused):
            check_generated_source(source + "\n" + added + "\n", "cuda")
    with pytest.raises(ProgramRefused):
        check_generated_source(source, "c")  # the CUDA preamble is not a C source's
