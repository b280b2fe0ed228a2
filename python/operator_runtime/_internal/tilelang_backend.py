"""The tilelang backend: kernels written in TileLang (ops/<op>/tilelang/<op>.py),
compiled by TileLang for the tensors' device: target "cuda" on a GPU, "c" on the CPU.

Each kernel is compiled once per (operator, program, dtypes, target) in this process and
also cached on disk by TileLang ($TILELANG_CACHE_DIR), and takes dynamic sizes, so a new
shape never recompiles. Every case maps onto one of two kernels per operator (_layout):
the contiguous one (flat, or rows of the innermost dim) or the strided one (any dim,
strides and broadcasting, passed to the kernel as sizes and strides). Between them: the row ops
read a dense input in its memory order (a transposed matrix is rows or columns of memory,
_memory_view); on the GPU, reduce_sum and softmax over a dim that is not innermost in memory have
a columns kernel (columns_program; reduce_sum's columns of SHORT_COLUMN_ROWS or fewer take the
strided one, a thread per output), and reduce_sum cuts few long rows or few column strips into
pieces summed in two kernels through a workspace (SplitPlan); an add that broadcasts over
(rows, columns) has a kernel of its own (_broadcast_layout).
Attention has one program for every layout (sizes and strides as scalars: _attention_layout).
bfloat16 on the C target is passed as its bits (tilelang_prims.py). The tensors stay on their
device: nothing falls back to torch or another backend. What no kernel expresses is refused
with UnsupportedError naming the case.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import logging
import math
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import torch

from ..errors import BackendUnavailableError, UnsupportedError
from . import tilelang_staging
from .backends import installed
from .prepared import PreparedBase
from .signature import OpSignature

TL_DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}
# How an operator maps onto its kernels is its signature's ``tilelang`` (operator_runtime/ops/<op>.py):
# "elementwise", "rows" (one dim: rows of the innermost, or strided), "tiles" (matmul) or "attention"
# (query, key, value: one program over any strides), handed in with the signature. The program
# factories of ops/<op>/tilelang/<op>.py, by name:


def contiguous_program(op: str) -> str:
    """The factory for contiguous operands (flat, or rows of the innermost dim)."""
    return f"{op}_program"


def strided_program(op: str) -> str:
    """The factory for any other layout: sizes and strides passed to the kernel ("tiles" ops have
    none: matmul's tilelang_staging.staged_operands says what its one program reads as it is)."""
    return f"{op}_strided_program"


def columns_program(op: str) -> str | None:
    """A GPU factory for a dense input reduced over a dim that is not innermost in memory, if the
    op's module has one (the C target takes the strided kernel)."""
    name = f"{op}_columns_program"
    return name if hasattr(kernels(op), name) else None


_lock = threading.Lock()
_modules: dict[str, ModuleType] = {}
_kernels: dict[tuple, object] = {}


def _tilelang():
    if not installed():
        raise BackendUnavailableError("the tilelang backend needs the tilelang package (pip install tilelang==0.1.15)")
    with warnings.catch_warnings():
        # TileLang imports tqdm.auto, which in a Jupyter kernel without ipywidgets (requirements.txt
        # installs it; the GPU machine's packs do not) warns "IProgress not found" on stderr, before a
        # check's own feedback. Its progress bars are never shown here (_quiet_logs). (A notebook that
        # imports tilelang.language itself first meets tqdm outside this filter.)
        warnings.filterwarnings("ignore", message="IProgress not found")
        import tilelang

    _quiet_logs()
    return tilelang


def _quiet_logs() -> None:
    """TileLang logs an INFO line per compile, written to stdout (through tqdm); a
    notebook's outputs, and nbval's comparison of them, must not change because a kernel
    was compiled. Keep its warnings and errors, on stderr."""
    logger = logging.getLogger("tilelang")
    if getattr(logger, "_oprt_quiet", False):
        return
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    to_stderr = logging.StreamHandler(sys.stderr)
    to_stderr.setFormatter(logging.Formatter("[TileLang:%(name)s:%(levelname)s] %(message)s"))
    logger.addHandler(to_stderr)
    logger.setLevel(logging.WARNING)
    logger._oprt_quiet = True


def _kernel_file(op: str) -> Path:
    """ops/<op>/tilelang/<op>.py of this checkout, or the copy installed with the package."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package.parents[1] / "ops" / op / "tilelang" / f"{op}.py", package / "_tilelang" / f"{op}.py"):
        if candidate.is_file():
            return candidate
    raise BackendUnavailableError(f"tilelang kernels for {op} were not found (ops/{op}/tilelang/{op}.py)")


def kernels(op: str) -> ModuleType:
    with _lock:
        if op not in _modules:
            _tilelang()
            path = _kernel_file(op)
            spec = importlib.util.spec_from_file_location(f"operator_runtime_tilelang_{op}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            _modules[op] = module
        return _modules[op]


def variant(op: str, gpu: bool, row_len: int) -> tuple:
    """Extra program arguments picked by shape: a kernel module with a ``gpu_strategy(row_len)``
    (reduce_sum, softmax) compiles one GPU kernel per strategy; the others, one for every shape."""
    strategy = getattr(kernels(op), "gpu_strategy", None)
    return tuple(strategy(row_len)) if gpu and strategy else ()


def compiled(op: str, dtypes: tuple[str, ...], gpu: bool, extra: tuple = (), program: str | None = None):
    """The compiled kernel for op over dtypes on the GPU or the CPU (compiled on first use):
    the contiguous program unless ``program`` names another factory."""
    program = program or contiguous_program(op)
    key = (op, program, dtypes, gpu, extra)
    if key not in _kernels:
        module, tilelang = kernels(op), _tilelang()
        prim_func = getattr(module, program)(*dtypes, gpu, *extra)
        # The cython execution backend exposes the compiled host function (lib.call), which
        # DirectLaunch calls without TileLang's per-call Python path.
        # A kernel module may ask for C compiler flags on the CPU (TileLang passes none: -O0) and for
        # TileLang pass configs on the GPU (GPU_PASS_CONFIGS, e.g. nvcc's fast math).
        flags = None if gpu else getattr(module, "CPU_COMPILE_FLAGS", None)
        configs = getattr(module, "GPU_PASS_CONFIGS", None) if gpu else None
        kernel = tilelang.compile(prim_func, target="cuda" if gpu else "c", execution_backend="cython",
                                  compile_flags=flags, pass_configs=configs)
        with _lock:
            _kernels.setdefault(key, kernel)
    return _kernels[key]


def _refuse(signature: OpSignature, out: torch.Tensor, inputs: dict[str, torch.Tensor], gpu: bool | None = None) -> None:
    """Every layout, dim and dtype of the implemented operators maps onto a kernel (see _layout;
    the API allows at most 8 dims, the strided kernels' largest rank); what is left to refuse is
    an operator with no TileLang kernel, and what matmul's and attention's programs do not express.
    ``gpu`` (default: out is on a GPU) picks the GPU kernels' rules, so that a machine without a GPU can
    check a case record's expected refusal against them (tests/runtime/ops/test_tilelang_refusals.py)."""
    op = signature.name
    gpu = out.device.type == "cuda" if gpu is None else gpu
    if not signature.tilelang:
        raise UnsupportedError(f"{op}: not implemented in the tilelang backend yet; use the cpu or nvidia backend")
    if signature.tilelang == "tiles":  # matmul's one program over contiguous operands
        _refuse_matmul(out, *inputs.values(), gpu=gpu)
    if signature.tilelang == "attention":
        _refuse_attention(op, out, *inputs.values(), gpu=gpu)


def _refuse_matmul(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, gpu: bool) -> None:
    """What no tilelang matmul expresses, staged or not (tilelang_staging.py copies the operands its
    program does not read as they are: staged_operands): batches that do not broadcast to out's, int32
    sizes, and on a GPU K = 0 (a TMA descriptor cannot describe an empty dim) and float32 (T.gemm
    would round it to tf32). On the CPU its C kernel multiplies f32, f16 and bf16 of any sizes."""
    batches = [t.shape[0] if t.dim() == 3 else 1 for t in (a, b, out)]
    if any(z not in (1, batches[2]) for z in batches[:2]):  # the C kernel repeats a batch of 1 (matmul.py)
        raise UnsupportedError(f"matmul: a {tuple(a.shape)} and b {tuple(b.shape)} have batches that do not broadcast "
                               f"to out's {tuple(out.shape)}")
    # the tensors the program would get: the staged copies where there are some (a broadcast operand
    # copied to the whole batch is larger than itself), the operands themselves elsewhere
    copied = tilelang_staging.staged_operands(out, a, b, gpu)
    shapes = [s for s, c in zip(tilelang_staging.staged_shapes(out, a, b, gpu), copied) if c]
    if max(math.prod(s) for s in (*shapes, out.shape, a.shape, b.shape)) >= 2**31:
        raise UnsupportedError("matmul: the tilelang kernel takes int32 sizes: operands of 2^31 elements or more are "
                               "not expressible")
    if not gpu:
        return
    if out.numel() and a.shape[-1] == 0:
        raise UnsupportedError("matmul: the tilelang kernel needs K >= 1 (a TMA descriptor cannot describe an empty "
                               "dim); K = 0 gives zeros on the cpu and nvidia backends")
    if out.dtype not in (torch.float16, torch.bfloat16):
        raise UnsupportedError(f"matmul: the tilelang backend multiplies float16 and bfloat16 (T.gemm on {out.dtype} "
                               f"would round to tf32); the nvidia backend runs float32")


def _refuse_attention(op: str, out: torch.Tensor, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                      gpu: bool) -> None:
    """What ops/<op>/tilelang/<op>.py expresses (any strides, sizes and batch dims): on a GPU f16/bf16 (its
    T.gemm would round float32 to tf32) with head dims up to its largest compiled tile; on the CPU (its C
    kernel walks a row element by element) f32, f16 and bf16 with head dims up to its local arrays."""
    module = kernels(op)
    d, dv = query.shape[-1], value.shape[-1]
    if not gpu:
        if max(d, dv) > module.MAX_HEAD_DIM_CPU:
            raise UnsupportedError(f"{op}: the tilelang CPU kernel takes head dims up to {module.MAX_HEAD_DIM_CPU} "
                                   f"(D={d}, Dv={dv}); the cpu backend runs any")
        return
    if max(d, dv) > module.HEAD_TILES[-1]:
        raise UnsupportedError(f"{op}: the tilelang GPU kernel takes {module.GPU_HEAD_DIMS} (D={d}, Dv={dv}); "
                               f"the nvidia backend runs larger ones")
    if out.dtype not in (torch.float16, torch.bfloat16):
        raise UnsupportedError(f"{op}: the tilelang backend multiplies float16 and bfloat16 on a GPU (T.gemm on "
                               f"{out.dtype} would round to tf32); the nvidia backend runs float32")
    if -(-query.shape[-2] // module.BLOCK_M) > 65535:  # the query tiles are the grid's y
        raise UnsupportedError(f"{op}: the tilelang GPU kernel takes up to {65535 * module.BLOCK_M} queries "
                               f"(Sq={query.shape[-2]})")


@dataclass
class Layout:
    """How one call maps onto a kernel: which program, and what its parameters get.

    The kernel's parameters are the tensors (inputs, then out) as buffers of ``shapes`` (the
    shapes only fix the dynamic sizes; each buffer is passed as its tensor's data pointer),
    then, for a strided program, the int64 tensor ``meta`` (sizes and strides) and ``scalars``
    (int64, or float32 where a float is given: attention's scale).
    """

    program: str
    extra: tuple                     # program arguments after (dtypes..., gpu)
    shapes: list[tuple[int, ...]]
    meta: list[int] | None = None
    scalars: tuple[int | float, ...] = ()
    # a second kernel after this one (SplitPlan): this one writes float32 partials of shapes[-1]
    # into a workspace, ``then`` reads them (its shapes[0]) and writes out
    then: Layout | None = None


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _extent(t: torch.Tensor) -> int:
    """Elements from t's data pointer to just past the last one it reaches (its flat buffer's length)."""
    if t.numel() == 0:
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))


def coalesce(sizes, strides: list) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims and merge each dim into the next inner one where every tensor steps
    over both as one (stride[k] == stride[k+1] * size[k+1]): a contiguous tensor becomes 1-d,
    a transposed matrix stays 2-d. Returns sizes and, per tensor, strides (at least one dim)."""
    dims: list[list] = []
    for k, size in enumerate(sizes):
        if size == 1:
            continue
        sts = [st[k] for st in strides]
        if dims and all(prev == st * size for prev, st in zip(dims[-1][1], sts)):
            dims[-1] = [dims[-1][0] * size, sts]
        else:
            dims.append([size, sts])
    if not dims:
        dims = [[1, [0] * len(strides)]]
    return [d[0] for d in dims], [[d[1][t] for d in dims] for t in range(len(strides))]


def _strided_meta(sizes, strides: list) -> tuple[int, list[int]]:
    """(compiled rank, meta): sizes then each tensor's strides, padded in front with size-1 dims."""
    from .tilelang_prims import rank_for

    sizes, strides = coalesce(sizes, strides)
    rank = rank_for(len(sizes))
    pad = rank - len(sizes)
    meta = [1] * pad + sizes
    for st in strides:
        meta += [0] * pad + st
    return rank, meta


def _layout(signature: OpSignature, out: torch.Tensor, inputs: tuple[torch.Tensor, ...], attrs: tuple,
            gpu: bool) -> Layout:
    """The kernel for this call. Element-wise ops: the flat kernel when every tensor is contiguous
    and of out's shape, the broadcast one for (rows, columns) broadcasts (_broadcast_layout), else
    the strided one over out's elements (inputs expanded to out's shape, so a broadcast dim has
    stride 0). Row ops over dim d: the rows kernel when the input is dense in some dim order with
    d innermost in memory and out follows that order (_memory_view); on the GPU the columns kernel
    when d is not innermost in memory (reduce_sum: and d longer than SHORT_COLUMN_ROWS); else the
    strided one."""
    op, how = signature.name, signature.tilelang
    if how == "rows":
        return _row_layout(signature, out, inputs[0], attrs, gpu)
    if how == "attention":
        return _attention_layout(op, out, *inputs, attrs, gpu)
    if how == "tiles":  # matmul: (batch, M, K) @ (batch, K, N) -> (batch, M, N); tiles by out's shape
        shapes = [tuple(t.shape) if t.dim() == 3 else (1, *t.shape) for t in (*inputs, out)]
        extra = tuple(kernels(op).gpu_strategy(out.shape[-2], out.shape[-1])) if gpu else ()  # one CPU kernel
        return Layout(contiguous_program(op), extra, shapes)
    tensors = (*inputs, out)
    if all(t.shape == out.shape and t.is_contiguous() for t in tensors):
        return Layout(contiguous_program(op), (), [(out.numel(),)] * len(tensors))
    expanded = [t.expand(out.shape) for t in inputs] + [out]
    broadcast = _broadcast_layout(op, expanded)
    if broadcast is not None:
        return broadcast
    rank, meta = _strided_meta(out.shape, [t.stride() for t in expanded])
    return Layout(strided_program(op), (rank,), [(_extent(t),) for t in expanded], meta, (out.numel(),))


def _broadcast_layout(op: str, expanded: list[torch.Tensor]) -> Layout | None:
    """The op's ``<op>_broadcast_program``, where it has one, for operands (expanded to out's shape,
    out last) whose dims coalesce to at most (rows, columns) with out's columns adjacent and every
    input's either adjacent or repeated (inner stride 1 or 0), rows of at least the module's
    BROADCAST_MIN_COLUMNS: see ops/vector_add/tilelang/vector_add.py."""
    program, module = f"{op}_broadcast_program", kernels(op)
    if not hasattr(module, program):
        return None
    sizes, strides = coalesce(expanded[-1].shape, [t.stride() for t in expanded])
    if len(sizes) > 2 or strides[-1][-1] != 1 or any(st[-1] not in (0, 1) for st in strides):
        return None
    rows, columns = (1, sizes[0]) if len(sizes) == 1 else sizes
    if columns < getattr(module, "BROADCAST_MIN_COLUMNS", 1):
        return None
    row_strides = [st[0] if len(sizes) == 2 else 0 for st in strides]
    return Layout(program, tuple(st[-1] for st in strides[:-1]), [(_extent(t),) for t in expanded], None,
                  (rows, columns, *row_strides))


def _attention_layout(op: str, out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attrs: tuple,
                      gpu: bool) -> Layout:
    """Attention's one program (ops/<op>/tilelang/<op>.py): query, key, value and out as flat buffers; the
    batch dims (all but the last three) coalesced into meta; the sizes, is_causal, every operand's strides
    over heads (0 for a 2-d operand), sequence and features, and the scale as scalars. attrs: the C
    attributes (is_causal, scale, enable_gqa)."""
    causal, scale, _ = attrs
    tensors = (q, k, v, out)
    lead = max(q.dim() - 3, 0)
    rank, meta = _strided_meta(q.shape[:lead], [t.stride()[:lead] for t in tensors])
    heads, kv_heads = (q.shape[-3], k.shape[-3]) if q.dim() > 2 else (1, 1)
    inner = []
    for t in tensors:
        inner += [t.stride(-3) if t.dim() > 2 else 0, t.stride(-2), t.stride(-1)]
    d, dv = q.shape[-1], v.shape[-1]
    scalars = (_numel(q.shape[:lead]), heads, heads // kv_heads if kv_heads else 1, q.shape[-2], k.shape[-2], d, dv,
               int(causal), *inner, float(scale))
    module = kernels(op)
    extra = (rank, module.head_tile(d), module.head_tile(dv)) if gpu else (rank,)
    return Layout(contiguous_program(op), extra, [(_extent(t),) for t in tensors], meta, scalars)


def _attention_dense_layout(op: str, out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                            attrs: tuple) -> Layout | None:
    """Attention's dense GPU program (``<op>_dense_program``) for the layout users pass most: query, key,
    value and out contiguous (..., H, S, D) with the same batch dims, D = Dv one of its head dims, keys
    present, a positive scale (the program takes the row max before scaling), float16 or bfloat16; as
    (B*H, S, D) tensors with heads, group, is_causal and the scale as scalars. None where it does not
    apply (the general program runs). Pointer alignment is checked per call (AlignedPlan)."""
    module = kernels(op)
    causal, scale, _ = attrs
    d, sq, sk = q.shape[-1], q.shape[-2], k.shape[-2]
    if torch.cuda.get_device_capability(out.device) < (9, 0):  # TMA and wgmma; ~160 KiB of shared memory at D = 128
        return None
    if not (out.dtype in (torch.float16, torch.bfloat16) and d == v.shape[-1] and d in module.DENSE_HEAD_DIMS
            and sk > 0 and scale > 0 and all(t.is_contiguous() for t in (q, k, v, out)) and k.shape == v.shape
            and q.dim() == k.dim() == out.dim() and q.shape[:-3] == k.shape[:-3]):
        return None
    heads, kv_heads = (q.shape[-3], k.shape[-3]) if q.dim() > 2 else (1, 1)
    bhq, bhk = _numel(q.shape[:-2]), _numel(k.shape[:-2])
    if heads % kv_heads or bhq > 65535:  # the grid's y is (batch, head)
        return None
    return Layout(f"{op}_dense_program", (d,), [(bhq, sq, d), (bhk, sk, d), (bhk, sk, d), (bhq, sq, d)], None,
                  (heads, heads // kv_heads, int(causal), float(scale)))


def _dense(t: torch.Tensor, dims: list[int]) -> bool:
    """Whether t's elements fill a block of memory row-major over ``dims`` (outermost first; size-1
    dims anywhere and the dims not named, all of size 1, take no room)."""
    expected = 1
    for k in reversed(dims):
        if t.shape[k] != 1:
            if t.stride(k) != expected:
                return False
            expected *= t.shape[k]
    return True


def _memory_view(x: torch.Tensor, out: torch.Tensor, d: int, reduces: bool) -> tuple[int, int, int] | None:
    """(outer, L, inner): x's memory read as a contiguous (outer, L, inner) tensor reduced over L, when
    x is dense in some order of its dims (contiguous, or a permutation of a contiguous tensor: a
    transposed matrix) and out's elements lie in that order without gaps, so the rows and columns
    kernels serve it. A sum over dim 1 of a transposed (31, 1944048) matrix is then a column sum of
    (1944048, 31) memory, not 31 threads walking 1.9M elements each (811 ms on an H100). None where
    x overlaps itself (a broadcast), has gaps, or out does not follow x's order."""
    # x's dims outermost first (a size-1 d goes innermost: a row of one element)
    order = sorted((k for k in range(x.dim()) if x.shape[k] != 1 and k != d), key=x.stride, reverse=True)
    if x.shape[d] == 1:
        order.append(d)
    else:
        order.insert(sum(x.stride(k) > x.stride(d) for k in order), d)
    if not _dense(x, order):
        return None
    if reduces:  # out's dims: x's without d, or with d of size 1 (keepdim)
        out_dims = [k if out.dim() == x.dim() else k - (k > d) for k in order if k != d]
    else:
        out_dims = order
    if not _dense(out, out_dims):
        return None
    p = order.index(d)
    return _numel(x.shape[k] for k in order[:p]), x.shape[d], _numel(x.shape[k] for k in order[p + 1:])


@functools.lru_cache(maxsize=None)
def _gpu_sms(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


def _sm_count(device: torch.device) -> int:
    """The device's SMs (132, an H100's or H200's, for a tensor off any GPU: the layout tests)."""
    return _gpu_sms(device.index) if device.type == "cuda" else 132


def _row_layout(signature: OpSignature, out: torch.Tensor, x: torch.Tensor, attrs: tuple, gpu: bool) -> Layout:
    op, reduces = signature.name, signature.reduces_dim
    if x.dim() == 0:  # a scalar is one row of one element
        x = x.reshape(1)
        out = out.reshape(1) if not reduces else out
    d = attrs[0] % x.dim()
    length = x.shape[d]
    view = _memory_view(x, out, d, reduces)
    if view is not None and view[2] == 1:  # rows of the innermost dim in memory
        rows = view[0]
        cut = getattr(kernels(op), "row_pieces", None) if gpu and reduces else None
        pieces, piece_len = cut(rows, length, _sm_count(out.device)) if cut else (1, length)
        if pieces > 1:  # few long rows, cut into pieces (ops/reduce_sum/tilelang/reduce_sum.py)
            then = Layout(f"{op}_partials_program", (), [(pieces, rows), (rows,)])
            return Layout(f"{op}_row_pieces_program", (), [(rows, length), (pieces, rows)], None, (piece_len,), then)
        shapes = [(rows, length), (rows,) if reduces else (rows, length)]
        return Layout(contiguous_program(op), variant(op, gpu, length), shapes)
    columns = columns_program(op) if gpu else None
    if reduces and length <= getattr(kernels(op), "SHORT_COLUMN_ROWS", 0):
        columns = None  # short columns: a thread per output (the strided kernel below) keeps every thread busy
    if columns and view is not None:
        # d is not innermost in memory: (outer, L, inner) with inner contiguous columns; reduce_sum's
        # out is (outer, inner) in the same order (keepdim or not), softmax's x's shape; a kernel whose
        # warps read along rows
        outer, _, inner = view
        shape = (outer, length, inner)
        if not reduces:
            return Layout(columns, (), [shape, shape])
        cut = getattr(kernels(op), "column_pieces", None)
        pieces, piece_len = cut(outer, length, inner, _sm_count(out.device)) if cut else (1, length)
        if pieces == 1:
            return Layout(columns, (), [shape, (outer, inner)], None, (piece_len,))
        then = Layout(f"{op}_partials_program", (), [(pieces, outer * inner), (outer * inner,)])
        return Layout(columns, (True,), [shape, (pieces, outer, inner)], None, (piece_len,), then)
    other = [k for k in range(x.dim()) if k != d]
    if reduces:  # out's dims are x's without d (or with d of size 1: keepdim)
        out_strides = [out.stride(k) for k in other] if out.dim() == x.dim() else list(out.stride())
        tail = ()
    else:
        out_strides, tail = [out.stride(k) for k in other], (out.stride(d),)
    sizes = [x.shape[k] for k in other]
    rank, meta = _strided_meta(sizes, [[x.stride(k) for k in other], out_strides])
    return Layout(strided_program(op), (rank,), [(_extent(x),), (_extent(out),)], meta,
                  (_numel(sizes), length, x.stride(d), *tail))


class KernelPlan:
    """A compiled kernel's host function and the arguments of one layout, called on buffers
    given per call: holds no tensor of the caller, so the eager plan cache can keep it (it
    owns the small meta tensor of a strided kernel).

    TileLang's Python call path re-derives pointers, dynamic sizes, device and stream from the
    tensors on every call (~50 us on a CPU). For one layout the sizes never change, so they
    are built here once, as TileLang's own wrapper builds them: one argument per parameter (a
    pointer per tensor, then meta's pointer and the scalars), then each dynamic size (int64) in
    the kernel's order, then the stream. Measured by tests/run_ops.py --mode bench (host us).
    """

    def __init__(self, kernel, layout: Layout, device: torch.device):
        adapter = kernel.adapter
        self._call, self._last_error = adapter.lib.call, adapter.lib.get_last_error
        sizes = []
        for symbol, (ref_kind, tensor, dim, _scale) in adapter.dynamic_symbolic_map.items():
            if ref_kind != 0:  # 0: a dimension of a tensor; our kernels declare no symbolic strides
                raise UnsupportedError(f"tilelang: dynamic symbol of kind {ref_kind} in {kernel}")
            # in the symbol's own width: matmul declares int32 sizes, the other kernels int64
            width = ctypes.c_int32 if str(getattr(symbol, "dtype", "int64")) == "int32" else ctypes.c_int64
            sizes.append(width(layout.shapes[tensor][dim]))
        self.meta = None if layout.meta is None else torch.tensor(layout.meta, dtype=torch.int64, device=device)
        self._tail = ([ctypes.c_void_p(self.meta.data_ptr())] if self.meta is not None else []) + \
            [ctypes.c_float(v) if isinstance(v, float) else ctypes.c_int64(v) for v in layout.scalars] + sizes
        # The same host function through a prototype of our own: with argument types declared,
        # ctypes converts the pointers (plain ints) in C, where building a c_void_p per pointer
        # in Python cost more than the call itself; TileLang's own handle stays untouched.
        argtypes = [ctypes.c_void_p] * len(layout.shapes) + [type(v) for v in self._tail] + [ctypes.c_void_p]
        self._fn = ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(ctypes.cast(self._call, ctypes.c_void_p).value)
        self.workspace_bytes = 0
        self._cuda_index = device.index if device.type == "cuda" else None
        self.call = _plan_call(self._fn, tuple(self._tail), len(layout.shapes) - 1, self._last_error)

    def launch(self, pointers: list, stream: int | None = None) -> None:
        """Call with ``pointers`` (a ctypes pointer per tensor: inputs, then out) on ``stream``
        (the device's current stream when None)."""
        if stream is None:
            stream = 0 if self._cuda_index is None else torch._C._cuda_getCurrentRawStream(self._cuda_index)
        if self._fn(*pointers, *self._tail, stream) != 0:
            self._fail()

    def _fail(self):
        _fail(self._last_error)

    def close(self) -> None:
        pass


def _fail(last_error):
    raise RuntimeError(f"tilelang kernel failed: {last_error().decode(errors='replace')}")


def _plan_call(fn, tail: tuple, n_inputs: int, last_error):
    """KernelPlan.call, the plan-cache entry point as binding.Plan.call: call(out, *inputs, stream)
    with data pointers in the C order (out's first) and the stream (None: the CPU, or the default
    stream); raises on failure, else 0. The kernel takes the inputs first and out after them:
    one closure per arity reorders them without building a tuple per call (issue 16's host time).
    A closure, not a method: it holds no reference to the plan."""
    if n_inputs == 1:
        def call(out, a, stream) -> int:
            if fn(a, out, *tail, stream) != 0:
                _fail(last_error)
            return 0
    elif n_inputs == 2:
        def call(out, a, b, stream) -> int:
            if fn(a, b, out, *tail, stream) != 0:
                _fail(last_error)
            return 0
    else:
        def call(out, *inputs_and_stream) -> int:
            if fn(*inputs_and_stream[:-1], out, *tail, inputs_and_stream[-1]) != 0:
                _fail(last_error)
            return 0
    return call


class AlignedPlan:
    """A kernel that needs every data pointer on a 16-byte boundary (``aligned``: copy's
    ``<op>_aligned_program``, whose whole blocks load and store 16 bytes at a time; attention's dense
    program, whose tiles move by TMA), and the general one for the same call otherwise (``make_plain``,
    compiled on first need). Checked on every call: a prepared op's run(new buffers) and the eager
    plan cache reuse the plan for tensors of the same layout but any storage offset. Same interface
    as KernelPlan."""

    workspace_bytes = 0

    def __init__(self, aligned: KernelPlan, make_plain):
        plain: list = []  # [KernelPlan], made on the first misaligned call

        def plain_plan() -> KernelPlan:
            if not plain:
                plain.append(make_plain())
            return plain[0]

        self._aligned, self._plain_plan = aligned, plain_plan
        aligned_call = aligned.call

        def call(out, *inputs_and_stream) -> int:
            # the stream (last) is not a pointer; an empty operand's NULL is not misaligned
            for p in (out, *inputs_and_stream[:-1]):
                if p and p & 15:
                    return plain_plan().call(out, *inputs_and_stream)
            return aligned_call(out, *inputs_and_stream)

        self.call = call

    def launch(self, pointers: list, stream: int | None = None) -> None:
        if any(p.value and p.value & 15 for p in pointers):
            self._plain_plan().launch(pointers, stream)
        else:
            self._aligned.launch(pointers, stream)

    def close(self) -> None:
        pass


class AlignmentCheckedPlan:
    """A KernelPlan whose kernel needs every data pointer on a 16-byte boundary (matmul's TMA copies
    on the GPU): prepare stages a misaligned tensor (tilelang_staging.py), but the eager plan cache
    keys layouts, not offsets, and run(new buffers) keeps the plan: both are checked here on every
    call and refused (an eager call then prepares afresh, staged: plan_cache.run_eager)."""

    workspace_bytes = 0

    def __init__(self, plan: KernelPlan, op: str):
        self._plan = plan
        plan_call = plan.call

        def call(out, *inputs_and_stream) -> int:
            for p in (out, *inputs_and_stream[:-1]):  # the stream (last) is not a pointer
                if p and p & 15:
                    raise UnsupportedError(f"{op}: the tilelang kernel copies with TMA, which needs the tensors "
                                           f"16-byte aligned (a data pointer is {p % 16} bytes past a boundary); "
                                           f"prepare with these tensors instead (their copies are aligned)")
            return plan_call(out, *inputs_and_stream)

        self.call = call

    def launch(self, pointers: list, stream: int | None = None) -> None:
        self._plan.launch(pointers, stream)  # DirectLaunch's tensors passed prepare's checks

    def close(self) -> None:
        self._plan.close()


class SplitPlan:
    """Two kernels in turn through a float32 workspace the plan owns: ``first`` reads the input and
    writes partials into it, ``then`` reads them and writes out (reduce_sum's rows or columns cut
    into pieces, see ops/reduce_sum/tilelang/reduce_sum.py). Same interface as KernelPlan. A cached plan
    is used by one call at a time; calls on two streams in turn are ordered by the caller, as for
    any output buffer."""

    def __init__(self, first: KernelPlan, then: KernelPlan, workspace: torch.Tensor):
        self._first, self._then = first, then
        self.workspace_bytes = workspace.numel() * workspace.element_size()
        work = workspace.data_ptr()
        first_call, then_call = first.call, then.call

        def call(out, x, stream, _keep=workspace) -> int:  # the workspace lives as long as the call
            first_call(work, x, stream)
            return then_call(out, work, stream)

        self.call = call
        self._work = ctypes.c_void_p(work)

    def launch(self, pointers: list, stream: int | None = None) -> None:
        x, out = pointers
        self._first.launch([x, self._work], stream)
        self._then.launch([self._work, out], stream)

    def close(self) -> None:
        pass


class DirectLaunch:
    """A KernelPlan bound to its tensors: calling it launches with arguments built once
    (the prepared steady state)."""

    def __init__(self, plan: KernelPlan, tensors: tuple[torch.Tensor, ...]):
        self.plan = plan
        self._tensors = tensors  # the pointers below must stay valid as long as this object lives
        self._pointers = [ctypes.c_void_p(t.data_ptr()) for t in tensors]

    def __call__(self) -> None:
        self.plan.launch(self._pointers)


class _NothingToLaunch:
    """The plan of an empty output: there is nothing to do (a zero-block launch is an error on the GPU)."""

    workspace_bytes = 0

    def call(self, *pointers_and_stream) -> int:
        return 0

    def close(self) -> None:
        pass


class TileLangPrepared(PreparedBase):
    """A compiled TileLang kernel bound to its tensors: the tilelang counterpart of
    PreparedOp, with the same run() / run(new buffers) / close() contract."""

    backend = "tilelang"

    def __init__(self, signature, out: torch.Tensor, inputs: tuple[torch.Tensor, ...], attrs: tuple):
        op = signature.name
        super().__init__(op, signature.inputs, out, inputs, signature.in_place_ok)
        if out.numel():
            # an op that converts dtypes (copy) has kernels specialised on both
            dtypes = ((TL_DTYPES[inputs[0].dtype], TL_DTYPES[out.dtype]) if signature.converts_dtype
                      else (TL_DTYPES[out.dtype],))
            gpu = out.device.type == "cuda"
            layout = _layout(signature, out, inputs, attrs, gpu)
            dense = _attention_dense_layout(op, out, *inputs, attrs) if gpu and signature.tilelang == "attention" else None

            def plan(program: str, layout: Layout = layout) -> KernelPlan:
                return KernelPlan(compiled(op, dtypes, gpu, layout.extra, program), layout, out.device)

            if gpu and layout.program == contiguous_program(op) and hasattr(kernels(op), f"{op}_aligned_program"):
                self._plan = AlignedPlan(plan(f"{op}_aligned_program"), lambda: plan(layout.program))
            elif dense is not None:
                self._plan = AlignedPlan(plan(dense.program, dense), lambda: plan(layout.program))
            elif layout.then is not None:
                workspace = torch.empty(layout.shapes[-1], dtype=torch.float32, device=out.device)
                self._plan = SplitPlan(plan(layout.program), plan(layout.then.program, layout.then), workspace)
            else:
                self._plan = KernelPlan(compiled(op, dtypes, gpu, layout.extra, layout.program), layout, out.device)
                if gpu and signature.tilelang == "tiles":
                    self._plan = AlignmentCheckedPlan(self._plan, op)
            self._launch = DirectLaunch(self._plan, (*inputs, out))
        else:  # nothing to do (a zero-block launch is an error on the GPU): nothing to compile
            self._plan, self._launch = _NothingToLaunch(), None
        self._closed = False

    def run(self, *inputs: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        if self._closed:
            raise RuntimeError(f"prepared {self.op} is closed")
        if not inputs and out is None:  # the steady state: arguments were made once
            if self._launch is not None:
                self._launch()
            return self.out
        inputs, out = self._swap(inputs, out)  # same layout as prepared, so the plan's sizes hold
        # on torch's current stream, as the steady state's launch: None would be the legacy default
        # stream, which a side stream's copies before and after this call do not wait for
        stream = torch._C._cuda_getCurrentRawStream(out.device.index) if out.is_cuda else None
        self._plan.call(out.data_ptr(), *[t.data_ptr() for t in inputs], stream)
        return out

    def detach_plan(self):
        """The kernel and its arguments for the eager plan cache (no tensors), and close."""
        plan = None if self._closed else self._plan
        self.close()
        return plan

    def close(self) -> None:
        self._closed = True
        self._launch = None
        super().close()

    def __repr__(self) -> str:
        return f"<prepared {self.op} on tilelang: {'closed' if self._closed else tuple(self._layouts[0][0])}>"


def prepare(signature, out: torch.Tensor, inputs: dict[str, torch.Tensor], attrs: tuple):
    """The tilelang end of bind_prepared: refuse what the kernels do not express, stage the matmul
    operands its program does not read as they are (tilelang_staging.py), else compile."""
    _refuse(signature, out, inputs)
    if signature.tilelang == "tiles" and out.numel() and any(tilelang_staging.staged_operands(out, *inputs.values(),
                                                                                             out.is_cuda)):
        return tilelang_staging.StagedMatmul(signature, out, *inputs.values(),
                                             lambda o, a, b: TileLangPrepared(signature, o, (a, b), attrs))
    return TileLangPrepared(signature, out, tuple(inputs.values()), attrs)
