"""Allowlist checks of a student's TileLang program before the grader compiles it, and of the
source TileLang generates from it before that source reaches a compiler.

    from operator_course.grader.program_check import load_program, compile_checked
    program = load_program(artifact.read_text())   # JSON -> PrimFunc, checked; global_symbol reset
    kernel = compile_checked(program, device)      # check, lower, scan the generated source, build

Everything here raises :class:`ProgramRefused` (a ValueError) with a message for the student
that names what was refused. Why an allowlist: a word list of forbidden calls missed
``T.attr(0, "pragma_import_c", "<C++>")`` (an AttrStmt, not a Call: TVM pastes its text into
the generated C, where a static constructor ran Python inside the grader) and a crafted
``global_symbol`` (pasted raw into the generated source as the kernel's name). So:

1. :func:`check_program` walks *every* object reachable from the PrimFunc through TVM's field
   reflection (the same fields ``tvm.ir.save_json`` writes, so nothing is skipped: statements,
   expressions, buffers and their shapes, params, the buffer map, loop and block annotations,
   the function's attributes, its struct info), and accepts only

   - the IR node types in ``NODE_TYPES`` (collected from the labs' solutions and the chapters'
     TileLang programs, tests/grader/test_program_check.py, plus a few a student may reasonably write:
     ``T.Select``, ``while``, comparisons);
   - calls to the ``tvm.ir.Op`` names in ``OPS`` (tile operations and math; never
     call_extern / call_packed / call_llvm_* / inline PTX / anything that calls out);
   - ``T.attr`` keys in ``ATTR_KEYS`` (only ``threadblock_swizzle_pattern``, i.e.
     ``T.use_swizzle``, whose value must be one of TileLang's three rasterization functions and a
     panel size): ``pragma_*`` and every other key are refused;
   - block, loop and call annotation keys in ``*_ANNOTATIONS`` with integer values (so
     ``T.import_source`` and ``T.Kernel(prelude=...)``, block annotations ``pragma_import_c``,
     are refused);
   - text only where TileLang needs it: a ``T.reduce_*`` kind (``"sum"``, ``"max"``, ...), the
     rasterization name of ``T.use_swizzle``, storage scopes and thread tags from fixed sets,
     dtypes from a fixed set, and names of variables, buffers and blocks that are plain C
     identifiers (they become identifiers of the generated C/CUDA). A ``T.StringImm`` anywhere
     else is refused;
   - function attributes: ``global_symbol`` only (a plain name), which the grader then resets
     to ``GLOBAL_SYMBOL``: the kernel's name in the generated source is the grader's choice.

2. :func:`check_generated_source` scans the complete source TileLang hands to g++ (C target) or
   nvcc (CUDA), kernel and host wrapper together, before it is compiled: only the preprocessor
   lines TileLang emits (its ``#include`` set, ``#pragma unroll``, its own ``#define``/``#if``
   lines), no ``__attribute__``, ``asm``, ``[[``, ``_Pragma``, ``constructor``, digraphs,
   trigraphs, line splices or backslashes outside literals, and only the string literals
   TileLang's wrapper writes. It is a second line behind (1), not a C++ parser.

3. :func:`compile_checked` is ``kernels.compile_tilelang`` with both checks and without
   TileLang's kernel cache (a cached library would be loaded without its source being scanned).
   TileLang 0.1.15 lowers, generates the source and compiles it within one call
   (``JITKernel`` -> ``CythonKernelAdapter.__init__`` -> ``LibraryGenerator.compile_lib``), so
   the scan runs inside ``compile_lib``, on ``lib_code``, the exact text about to be compiled.
"""

from __future__ import annotations

import contextlib
import json
import re

GLOBAL_SYMBOL = "main"  # every checked program's name: TileLang names the kernel main_kernel
MAX_PROGRAM_JSON = 16 * 1024 * 1024  # characters; the labs' programs serialize to 20-60 KB
MAX_NODES = 200_000  # objects walked; the largest lab program has a few thousand

ALLOWED = ("lab kernels may only use TileLang's tile operations (T.Kernel, T.alloc_fragment / "
           "T.alloc_shared / T.alloc_local, T.copy, T.fill / T.clear, T.Parallel / T.serial / "
           "T.Pipelined, T.gemm, T.reduce_*, T.atomic_add), arithmetic and math such as T.exp: "
           "nothing that calls outside the kernel or pastes text into the generated code")

# IR node types a lab program is made of (type keys), besides the ones handled by name below
# (tirx.PrimFunc, tirx.Call, tirx.AttrStmt, tirx.StringImm, ir.Op, ir.DictAttrs).
NODE_TYPES = frozenset({
    # statements
    "tirx.SBlockRealize", "tirx.SBlock", "tirx.SeqStmt", "tirx.For", "tirx.While", "tirx.IfThenElse",
    "tirx.Evaluate", "tirx.BufferStore", "tirx.Bind",
    # expressions
    "tirx.Var", "tirx.SizeVar", "ir.IntImm", "ir.FloatImm", "tirx.Cast", "tirx.BufferLoad", "tirx.Select",
    "tirx.Let", "tirx.Add", "tirx.Sub", "tirx.Mul", "tirx.Div", "tirx.Mod", "tirx.FloorDiv", "tirx.FloorMod",
    "tirx.Min", "tirx.Max", "tirx.EQ", "tirx.NE", "tirx.LT", "tirx.LE", "tirx.GT", "tirx.GE", "tirx.And",
    "tirx.Or", "tirx.Not",
    # buffers, loop variables, types
    "tirx.Buffer", "tirx.BufferRegion", "tirx.IterVar", "ir.Range", "ir.PrimType", "ir.PointerType", "ir.TupleType",
    # T.annotate_layout's values (block annotation layout_map)
    "tl.Layout", "tl.Fragment",
    # the PrimFunc's struct info (every T.prim_func has it; codegen never reads it)
    "relax.FuncStructInfo", "relax.TupleStructInfo", "relax.TensorStructInfo", "relax.ShapeStructInfo",
    "relax.PrimStructInfo", "relax.expr.ShapeExpr",
})

TILE_OPS = frozenset({
    "tl.tileop.copy", "tl.tileop.fill", "tl.tileop.gemm", "tl.tileop.reduce", "tl.tileop.cumsum",
    "tl.tileop.atomicadd", "tl.region", "tl.launch_thread_idx",
    "tl.atomic_add_elem_op", "tl.access_ptr",  # a scalar T.atomic_add(Y[i], v)
    "tl.infinity",  # T.infinity(dtype): a softmax's running max starts there (lab 4's mistakes use it)
})
MATH_OPS = frozenset("tirx." + name for name in (
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
    "sigmoid", "erf", "fabs", "floor", "ceil", "round", "nearbyint", "trunc", "pow", "fmod", "isnan", "isinf",
    "isfinite", "copysign", "if_then_else", "likely", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "shift_left", "shift_right", "reinterpret"))
OPS = TILE_OPS | MATH_OPS

# T.reduce_sum / _max / _min / _abssum / _absmax / _bitand / ...: the kind is a StringImm (args[2])
REDUCE_KINDS = frozenset({"sum", "abssum", "max", "absmax", "min", "bitand", "bitor", "bitxor"})
# T.use_swizzle: T.attr(None, "threadblock_swizzle_pattern", T.tvm_tuple(<one of these>, panel))
SWIZZLE_FUNCTIONS = frozenset({"rasterization2DRow", "rasterization2DColumn", "rasterization2DMLX"})
ATTR_KEYS = frozenset({"threadblock_swizzle_pattern"})

SBLOCK_ANNOTATIONS = frozenset({"tl.launch_threads", "layout_map"})  # T.Kernel's threads, T.annotate_layout
FOR_ANNOTATIONS = frozenset({"num_stages", "tl_pipeline_order", "tl_pipeline_stage", "coalesced_width"})
CALL_ANNOTATIONS = frozenset({"coalesced_width", "disable_tma", "k_pack", "wg_wait", "batch", "nan_propagate",
                              "memory_order"})
FUNC_ATTRS = frozenset({"global_symbol"})

SCOPES = frozenset({"global", "shared", "shared.dyn", "local", "local.fragment", "local.var"})
THREAD_TAGS = frozenset({"", "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"})
DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                    "bfloat16", "float32", "float64", "handle"})

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# Words the generated source must not contain (check_generated_source); a name that is one of
# them, or a C/C++/CUDA keyword, is refused already in the program, with a clearer message.
_FORBIDDEN_WORDS = re.compile(
    r"\b(__attribute__|__attribute|asm|__asm__|__asm|_Pragma|__pragma|__declspec|constructor|destructor|"
    r"init_priority|dlopen|dlsym|dlvsym|dlmopen|system|popen|execve|execv|execvp|execl|execlp|fork|vfork|"
    r"syscall|ptrace|__builtin_\w*|_?Py[A-Z_]\w*)\b")
_KEYWORDS = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t
    class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
    decltype default delete do double dynamic_cast else enum explicit export extern false float for friend
    goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
    protected public register reinterpret_cast requires restrict return short signed sizeof static
    static_assert static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Pragma _Static_assert _Thread_local
    __global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ __forceinline__
    __noinline__ __launch_bounds__ __grid_constant__
""".split())


class ProgramRefused(ValueError):
    """The program (or the source generated from it) is not one the grader compiles; the
    message is the student's feedback."""


def _refused(what: str) -> ProgramRefused:
    return ProgramRefused(f"the program uses {what}: {ALLOWED}")


def _name_problem(name: str) -> str | None:
    """Why ``name`` (of a variable, buffer or block) cannot be a C identifier of the generated
    code, or None."""
    if name in THREAD_TAGS:  # T.Kernel's block index: an IterVar whose var is named after its tag
        return None
    if not _IDENTIFIER.fullmatch(name):
        return "is not a plain identifier (letters, digits and _, at most 64)"
    if name.startswith("__") or re.match(r"_[A-Z]", name) or "__" in name:
        return "is a name reserved for the compiler (it starts with _ and a capital, or contains __)"
    if name in _KEYWORDS or _FORBIDDEN_WORDS.fullmatch(name):
        return "is a keyword or a name the generated code may not use"
    return None


def _show(text: str, limit: int = 60) -> str:
    text = str(text)
    return repr(text if len(text) <= limit else text[:limit] + "...")


_FIELDS: dict[str, list] = {}


def _fields(obj) -> list:
    """(name, getter) of every reflected field of ``obj``'s type, its ancestors' first."""
    info = type(obj).__tvm_ffi_type_info__
    key = info.type_key
    if key not in _FIELDS:
        chain = []
        while info is not None:
            chain.append(info)
            info = info.parent_type_info
        _FIELDS[key] = [(f.name, f.getter) for t in reversed(chain) for f in t.fields]
    return _FIELDS[key]


def _type_key(obj) -> str | None:
    info = getattr(type(obj), "__tvm_ffi_type_info__", None)
    return None if info is None else info.type_key


class _Walk:
    def __init__(self):
        import tvm_ffi

        self.Array, self.Map = tvm_ffi.Array, tvm_ffi.Map
        self.problems: list[str] = []
        self.seen: set[int] = set()
        self.stack: list[tuple[object, str]] = []
        self.count = 0

    def refuse(self, what: str) -> None:
        if what not in self.problems:
            self.problems.append(what)

    def push(self, value, where: str) -> None:
        self.stack.append((value, where))

    def run(self, root) -> None:
        self.push(root, "the program")
        while self.stack:
            value, where = self.stack.pop()
            self.count += 1
            if self.count > MAX_NODES:
                self.refuse(f"more than {MAX_NODES} IR nodes")
                return
            self.value(value, where)

    # a value of a field: a primitive, a container, a text or an object
    def value(self, value, where: str) -> None:
        if value is None or isinstance(value, (bool, int, float)):
            return
        if isinstance(value, str):
            self.refuse(f"the text {_show(value)} in {where}")
            return
        if isinstance(value, self.Array):
            for item in value:
                self.push(item, where)
            return
        if isinstance(value, self.Map):
            for k, v in value.items():
                self.push(k, where)
                self.push(v, where)
            return
        key = _type_key(value)
        if key is None:
            self.refuse(f"a {type(value).__name__} value in {where}")
            return
        handle = value.__ctypes_handle__().value
        if handle in self.seen:
            return
        self.seen.add(handle)
        handler = getattr(self, "node_" + key.replace(".", "_"), None)
        if handler is not None:
            handler(value, where)
        elif key in NODE_TYPES:
            self.fields(value, key)
        else:
            self.refuse(_describe_type(key, where))

    def fields(self, obj, key: str, skip: tuple[str, ...] = ()) -> None:
        for name, getter in _fields(obj):
            if name == "span" or name in skip:  # source positions: never reach the generated code
                continue
            value = getter(obj)
            if name == "dtype":
                self.dtype(value, key)
            elif name == "name" and key in ("tirx.Var", "tirx.SizeVar", "tirx.Buffer") or name == "name_hint":
                self.name(value, "variable" if "Var" in key else "buffer" if key == "tirx.Buffer" else "block")
            elif name == "storage_scope":
                if str(value) not in SCOPES:
                    self.refuse(f"the memory scope {_show(value)}")
            elif name == "thread_tag":
                if str(value) not in THREAD_TAGS:
                    self.refuse(f"the thread tag {_show(value)}")
            elif name == "annotations":
                self.annotations(value, key)
            else:
                self.push(value, f"{key}.{name}")

    def dtype(self, value, key: str) -> None:
        if value is None:
            return
        if str(value) not in DTYPES:
            self.refuse(f"the dtype {_show(value)} (in {key})")

    def name(self, value, kind: str) -> None:
        problem = _name_problem(str(value))
        if problem:
            self.refuse(f"a {kind} named {_show(value)}, which {problem}")

    def annotations(self, value, key: str) -> None:
        if value is None:
            return
        allowed, kind = {"tirx.SBlock": (SBLOCK_ANNOTATIONS, "the block annotation"),
                         "tirx.For": (FOR_ANNOTATIONS, "the loop annotation"),
                         "tirx.Call": (CALL_ANNOTATIONS, "the tile-op annotation")}.get(key, (frozenset(), "the annotation"))
        for k, v in value.items():
            name = str(k)
            if not isinstance(k, str) or name not in allowed:
                hint = " (T.import_source, T.sblock_attr or a keyword of T.Kernel such as prelude=)" if key == "tirx.SBlock" else ""
                self.refuse(f"{kind} {_show(name)}{hint}")
            elif name == "layout_map":  # {buffer data var: T.Layout / T.Fragment}
                if not isinstance(v, self.Map):
                    self.refuse(f"{kind} 'layout_map' holding a {type(v).__name__}")
                    continue
                for var, layout in v.items():
                    self.push(var, "T.annotate_layout")
                    if _type_key(layout) not in ("tl.Layout", "tl.Fragment"):
                        self.refuse(f"T.annotate_layout with a {type(layout).__name__}")
                    self.push(layout, "T.annotate_layout")
            elif not self.integers(v):
                self.refuse(f"{kind} {_show(name)} with a value that is not an integer")

    def integers(self, value) -> bool:
        """An int, a bool, an IntImm, or an array of them."""
        if isinstance(value, bool) or isinstance(value, int) and not isinstance(value, str):
            return True
        if isinstance(value, self.Array):
            return all(self.integers(item) for item in value)
        if _type_key(value) == "ir.IntImm":
            self.push(value, "an annotation")
            return True
        return False

    # the node types with rules of their own
    def node_tirx_PrimFunc(self, func, where: str) -> None:
        self.fields(func, "tirx.PrimFunc", skip=("attrs",))
        attrs = func.attrs
        if attrs is None:
            return
        for key, value in attrs.items():
            key = str(key)
            if key not in FUNC_ATTRS:
                self.refuse(f"the function attribute {_show(key)} (set with with_attr or T.func_attr)")
            elif key == "global_symbol" and (not isinstance(value, str) or _name_problem(str(value))):
                self.refuse(f"the function attribute 'global_symbol' = {_show(value)}, which is not a plain "
                            "name (the grader names the kernel itself)")

    def node_tirx_Call(self, call, where: str) -> None:
        op = call.op
        if _type_key(op) != "ir.Op":
            self.refuse(f"a call to {_show(getattr(op, 'name_hint', op))}, which is not a TileLang operation")
            return
        name = str(op.name)
        if name not in OPS:
            self.refuse(_describe_call(name, call.args))
            return
        self.dtype(call.dtype, "tirx.Call")
        for i, arg in enumerate(call.args):
            if _type_key(arg) == "tirx.StringImm":
                if name == "tl.tileop.reduce" and i == 2 and str(arg.value) in REDUCE_KINDS:
                    continue
                if name == "tl.infinity" and i == 0 and str(arg.value) in DTYPES:  # T.infinity(dtype)
                    continue
                self.refuse(f"the text {_show(arg.value)} as argument {i} of {_show(name)}")
            else:
                self.push(arg, name)
        self.annotations(call.annotations, "tirx.Call")

    def node_tirx_AttrStmt(self, stmt, where: str) -> None:
        key = str(stmt.attr_key)
        if key not in ATTR_KEYS:
            self.refuse(f"T.attr {_show(key)}")
            self.push(stmt.body, "T.attr")  # the rest is still checked, for one full report
            return
        # T.use_swizzle: node None, value T.tvm_tuple("rasterization2D...", panel size)
        value = stmt.value
        args = list(value.args) if _type_key(value) == "tirx.Call" and _type_key(value.op) == "ir.Op" \
            and str(value.op.name) == "tirx.tvm_tuple" else None
        if stmt.node is not None or args is None or len(args) != 2 or _type_key(args[0]) != "tirx.StringImm" \
                or str(args[0].value) not in SWIZZLE_FUNCTIONS or _type_key(args[1]) != "ir.IntImm":
            self.refuse(f"T.attr {_show(key)} with a value other than T.use_swizzle's")
        else:
            self.push(args[1], "T.use_swizzle")
        self.push(stmt.body, "T.attr")

    def node_tirx_StringImm(self, node, where: str) -> None:
        self.refuse(f"the text {_show(node.value)} in {where} (T.StringImm)")

    def node_ir_Op(self, op, where: str) -> None:
        self.refuse(f"the operation {_show(op.name)} as a value in {where}")


_CALL_NAMES = {  # the T.* spelling a student wrote, for the message
    "tirx.call_extern": "T.call_extern", "tirx.call_pure_extern": "T.call_pure_extern",
    "tirx.tvm_call_packed": "T.call_packed", "tirx.tvm_call_cpacked": "T.call_cpacked",
    "tirx.call_llvm_intrin": "T.call_llvm_intrin", "tirx.call_llvm_pure_intrin": "T.call_llvm_pure_intrin",
}


def _describe_call(name: str, args) -> str:
    spelled = _CALL_NAMES.get(name, f"the operation {_show(name)}")
    first = args[0] if len(args) else None
    callee = f" of {_show(first.value)}" if _type_key(first) == "tirx.StringImm" else ""
    return f"{spelled}{callee} ({name})"


def _describe_type(key: str, where: str) -> str:
    named = {"tirx.AssertStmt": "T.Assert", "tirx.Allocate": "a raw T.allocate", "tirx.DeclBuffer": "T.decl_buffer",
             "ir.GlobalVar": "a call to another function", "tirx.Prefetch": "T.prefetch"}
    return f"{named.get(key, 'the IR node ' + key)} (in {where})"


def check_program(program):
    """``program`` (a ``tvm.tirx.PrimFunc``) with ``global_symbol`` set to GLOBAL_SYMBOL, if
    every node, operation, attribute and text in it is on the allowlists above; otherwise
    raises ProgramRefused naming each thing refused."""
    from tilelang import tvm

    if not isinstance(program, tvm.tirx.PrimFunc):
        raise ProgramRefused(f"the program is a {type(program).__name__}, not a T.prim_func")
    walk = _Walk()
    walk.run(program)
    if walk.problems:
        shown = walk.problems[:6] + ([f"{len(walk.problems) - 6} more"] if len(walk.problems) > 6 else [])
        raise _refused("; ".join(shown))
    return program.with_attr("global_symbol", GLOBAL_SYMBOL)


_JSON_TYPES = NODE_TYPES | {"None", "ffi.String", "ffi.Array", "ffi.Map", "ir.Span", "ir.SourceName", "ir.DictAttrs",
                            "ir.Op", "tirx.PrimFunc", "tirx.Call", "tirx.AttrStmt", "tirx.StringImm"}


def load_program(text: str):
    """The checked PrimFunc (check_program's result) from an exported artifact (``tvm.ir.save_json``
    text). Before TVM builds any object from the text, its node types are checked against the
    same allowlist, so no other kind of object is ever constructed from a student's file."""
    from tilelang import tvm

    if not isinstance(text, str) or len(text) > MAX_PROGRAM_JSON:
        raise ProgramRefused(f"the exported program is larger than {MAX_PROGRAM_JSON} characters")
    try:
        graph = json.loads(text)
        nodes = graph["nodes"]
        types = {node["type"] for node in nodes}
    except (ValueError, TypeError, KeyError) as e:
        raise ProgramRefused(f"the exported program is not one TVM wrote ({type(e).__name__})") from None
    if not isinstance(graph, dict) or set(graph) - {"root_index", "nodes", "metadata", "b64ndarrays"} \
            or graph.get("b64ndarrays") or len(nodes) > MAX_NODES:
        raise ProgramRefused("the exported program is not one TVM wrote from a T.prim_func")
    unknown = sorted(t for t in types if t not in _JSON_TYPES)
    if unknown:
        raise _refused(", ".join(_describe_type(t, "the exported program") for t in unknown[:6]))
    try:
        program = tvm.ir.load_json(text)
    except Exception as e:  # noqa: BLE001 - TVM's parser refused the student's file
        raise ProgramRefused(f"the exported program could not be read: {str(e).splitlines()[0][:200]}") from None
    return check_program(program)


# --- the generated source ------------------------------------------------------------------------

_COMMON_DIRECTIVES = frozenset({
    "#ifdef _WIN32", "#else", "#endif", "#ifdef __cplusplus", "#define TL_EXPORT __declspec(dllexport)",
    "#define TL_EXPORT", "#define ERROR_BUF_SIZE 1024",
})
_DIRECTIVES = {
    "c": _COMMON_DIRECTIVES,
    "cuda": _COMMON_DIRECTIVES | {
        "#if defined(_MSC_VER) && !defined(__clang__) && _MSC_VER < 1940", "#define _tl_orig_alignas alignas",
        "#define alignas(N) _tl_orig_alignas((N) <= 64 ? (N) : 64)", "#undef alignas",
        "#define alignas _tl_orig_alignas", "#ifdef ENABLE_BF16",
    },
}
# what TileLang 0.1.15 includes (all of the labs' and chapters' programs together), plus any
# other header of its own template library for that target
_INCLUDES = {
    "c": frozenset({"tl_templates/cpp/common.h"}),
    "cuda": frozenset({"cuda.h", "cutlass/cuda_host_adapter.hpp", "math_constants.h"}),
}
_TEMPLATE_INCLUDE = {"c": re.compile(r"tl_templates/cpp/[a-z0-9_]+(/[a-z0-9_]+)*\.(h|hpp)"),
                     "cuda": re.compile(r"tl_templates/cuda/[a-z0-9_]+(/[a-z0-9_]+)*\.(h|hpp|cuh)")}
_PRAGMA = re.compile(r"#pragma unroll( \d{1,6})?")
_INCLUDE = re.compile(r"#include <([^<>\s]+)>")
# the string literals TileLang's host wrapper writes (names are identifiers of the program)
_LITERALS = [re.compile(p) for p in (
    r'""', r'"C"', r'"[A-Za-z_][A-Za-z0-9_]{0,80}"',
    r'"Error: Failed to initialize the TMA descriptor [A-Za-z_][A-Za-z0-9_]{0,80}"',
    r'"Failed to set the allowed dynamic shared memory size to %d with error: %s"',
)]
_CHARS = frozenset({"'\\0'"})
_TOKENS = ("[[", "<:", ":>", "<%", "%>", "%:")


def check_generated_source(text: str, target: str) -> None:
    """Raises ProgramRefused when ``text``, the source TileLang generated for ``target``
    ("c" or "cuda", or a tvm Target of that kind) has anything beyond what TileLang emits
    for the labs' programs (see the module's docstring)."""
    kind = target.get("kind") if isinstance(target, dict) else getattr(getattr(target, "kind", None), "name", target)
    if not isinstance(kind, str) or kind not in _DIRECTIVES:
        raise ValueError(f"no source rules for target {target!r}")

    def refuse(what: str) -> ProgramRefused:
        return ProgramRefused(f"the code TileLang generated from the program has {what}: {ALLOWED}")

    if not text.isascii():
        raise refuse("characters that are not ASCII")
    if re.search(r"[^\x20-\x7e\n\t]", text):
        raise refuse("control characters")
    if re.search(r"\\\s*\n", text):
        raise refuse("a line ending in a backslash (a line splice)")
    if re.search(r"\?\?[=/'()!<>\-]", text):
        raise refuse("a trigraph")
    code, literals = _strip(text, refuse)
    for literal in literals:
        if literal.startswith("'"):
            if literal not in _CHARS:
                raise refuse(f"the character literal {literal[:40]}")
        elif not any(p.fullmatch(literal) for p in _LITERALS):
            raise refuse(f"the string literal {_show(literal)}")
    lines = []
    for line in code.split("\n"):
        stripped = re.sub(r"\s+", " ", line.strip())
        if stripped.startswith("#"):
            include = _INCLUDE.fullmatch(stripped)
            if include:
                header = include.group(1)
                if header not in _INCLUDES[kind] and not _TEMPLATE_INCLUDE[kind].fullmatch(header):
                    raise refuse(f"the line {_show(stripped)} (an #include TileLang does not write)")
            elif stripped not in _DIRECTIVES[kind] and not _PRAGMA.fullmatch(stripped):
                raise refuse(f"the preprocessor line {_show(stripped)}")
        else:
            lines.append(line)
    body = "\n".join(lines)
    if "#" in body:
        raise refuse("a '#' outside a preprocessor line")
    if "\\" in body:
        raise refuse("a backslash outside a literal")
    for token in _TOKENS:
        if token in body:
            raise refuse(f"{token!r}")
    found = _FORBIDDEN_WORDS.search(body)
    if found:
        raise refuse(f"{found.group(0)!r}")


def _strip(text: str, refuse) -> tuple[str, list[str]]:
    """(``text`` with each comment replaced by a space and each literal by ``""``, the literals)."""
    out, literals, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            out.append(" ")
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise refuse("an unterminated comment")
            i = j + 2
            out.append(" ")
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\n":
                    raise refuse("a literal that does not end on its line")
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise refuse("an unterminated literal")
            before = out[-1][-1:] if out else ""
            after = text[j + 1:j + 2]
            if re.fullmatch(r"\w", before) or re.fullmatch(r"\w", after):
                raise refuse("a prefixed, raw or user-defined literal")
            literals.append(text[i:j + 1])
            out.append('""')
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), literals


# --- compiling -----------------------------------------------------------------------------------

@contextlib.contextmanager
def _scan_before_compiling(kind: str):
    """While a checked program compiles, TileLang's LibraryGenerator.compile_lib scans the
    source it is about to write and compile (lib_code: kernel and host wrapper) first."""
    from tilelang.jit.adapter import libgen

    original = libgen.LibraryGenerator.compile_lib

    def compile_lib(self, *args, **kwargs):
        check_generated_source(self.lib_code or "", kind)
        return original(self, *args, **kwargs)

    libgen.LibraryGenerator.compile_lib = compile_lib
    try:
        yield
    finally:
        libgen.LibraryGenerator.compile_lib = original


def compile_checked(program, device: str, inputs: int | None = None, reverse: bool = True):
    """kernels.compile_tilelang for the grader: the program is checked (check_program; its
    global_symbol reset), made compilable for the CPU where ``device`` is not "cuda", lowered,
    and its generated source scanned (check_generated_source) before g++/nvcc sees it. TileLang's
    kernel cache is neither read nor written. Returns the JITKernel (kernels.run_tilelang runs it)."""
    from tilelang.jit.kernel import JITKernel

    from operator_course.lab.kernels import PASS_CONFIGS, _nvcc_output_in_errors, refuse_uninitialized, target

    program = check_program(program)
    refuse_uninitialized(program)
    if device != "cuda":
        from operator_course.lab.cpu_tiles import prepare_for_cpu

        program = prepare_for_cpu(program, inputs, reverse)
    with _scan_before_compiling("cuda" if device == "cuda" else "c"), _nvcc_output_in_errors():
        return JITKernel(program, execution_backend="cython", target=target(device), pass_configs=dict(PASS_CONFIGS))
