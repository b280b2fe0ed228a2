"""The tilelang backend: kernels written in TileLang (ops/<op>/tilelang/<op>.py),
compiled by TileLang for the tensors' device: target "cuda" on a GPU, "c" on the CPU.

Each kernel is compiled once per (operator, dtypes, target) in this process and also
cached on disk by TileLang ($TILELANG_CACHE_DIR), and takes a dynamic length, so a new
size never recompiles. Cases a kernel does not express are refused with
UnsupportedError naming the case; the CUDA and CPU backends run them.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import sys
import threading
from pathlib import Path
from types import ModuleType

import torch

from ..errors import BackendUnavailableError, UnsupportedError
from .binding import PreparedBase

TL_DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}
IMPLEMENTED = {"copy": "copy_program", "vector_add": "vector_add_program", "reduce_sum": "reduce_sum_program",
               "softmax": "softmax_program", "matmul": "matmul_program"}
ROW_OPS = ("reduce_sum", "softmax")  # viewed as (rows, row_len) over the last dim

_lock = threading.Lock()
_modules: dict[str, ModuleType] = {}
_kernels: dict[tuple, object] = {}


_installed = False


def installed() -> bool:
    """Whether tilelang can be imported; once found, not searched for again (find_spec walks
    sys.path: a cost on every call). Not finding it is not remembered."""
    global _installed
    if not _installed:
        _installed = importlib.util.find_spec("tilelang") is not None
    return _installed


def _tilelang():
    if not installed():
        raise BackendUnavailableError("the tilelang backend needs the tilelang package (pip install tilelang==0.1.15)")
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


def compiled(op: str, dtypes: tuple[str, ...], gpu: bool, extra: tuple = ()):
    """The compiled kernel for op over dtypes on the GPU or the CPU (compiled on first use)."""
    key = (op, dtypes, gpu, extra)
    if key not in _kernels:
        module, tilelang = kernels(op), _tilelang()
        program = getattr(module, IMPLEMENTED[op])(*dtypes, gpu, *extra)
        # The cython execution backend exposes the compiled host function (lib.call), which
        # DirectLaunch calls without TileLang's per-call Python path.
        kernel = tilelang.compile(program, target="cuda" if gpu else "c", execution_backend="cython")
        with _lock:
            _kernels.setdefault(key, kernel)
    return _kernels[key]


def _refuse(op: str, out: torch.Tensor, inputs: dict[str, torch.Tensor], attrs: tuple) -> None:
    if op not in IMPLEMENTED:
        raise UnsupportedError(f"{op}: not implemented in the tilelang backend yet; use the cpu or nvidia backend")
    if op == "matmul":
        return _refuse_matmul(out, inputs["a"], inputs["b"])
    for name, t in {"out": out, **inputs}.items():
        if op != "reduce_sum" and t.shape != out.shape:
            raise UnsupportedError(f"{op}: the tilelang backend needs inputs of out's shape (no broadcasting); "
                                   f"{name} is {tuple(t.shape)}, out is {tuple(out.shape)}")
        if not t.is_contiguous():
            raise UnsupportedError(f"{op}: the tilelang backend needs contiguous tensors; {name} has strides "
                                   f"{t.stride()} for shape {tuple(t.shape)}")
    if op in ROW_OPS:
        x, dim = inputs["input"], attrs[0]
        if x.dim() > 1 and dim != x.dim() - 1:
            raise UnsupportedError(f"{op}: the tilelang backend works only over the last dim; dim={dim} of a "
                                   f"{x.dim()}-d input")
    for name, t in {"out": out, **inputs}.items():  # layout first, then dtype: one reason at a time
        if t.device.type == "cpu" and t.dtype == torch.bfloat16:
            raise UnsupportedError(f"{op}: bfloat16 on the CPU is not expressible in TileLang's C target ({name})")


def _refuse_matmul(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """What ops/matmul/tilelang/matmul.py expresses: contiguous f16/bf16 operands of one batch
    on a GPU, with the 16-byte row strides and alignment its TMA copies need."""
    if out.device.type == "cpu":
        raise UnsupportedError("matmul: T.gemm has no lowering for TileLang's C target (it infers no fragment "
                               "layout there); the cpu backend runs matmul on the CPU")
    for name, t in (("out", out), ("a", a), ("b", b)):
        if not t.is_contiguous():
            raise UnsupportedError(f"matmul: the tilelang backend needs contiguous tensors; {name} has strides "
                                   f"{t.stride()} for shape {tuple(t.shape)}")
    if a.dim() != b.dim() or a.shape[:-2] != b.shape[:-2]:
        raise UnsupportedError(f"matmul: the tilelang backend needs a and b of one batch (no broadcasting); "
                               f"a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    k, n = a.shape[-1], b.shape[-1]
    if out.numel() and k == 0:
        raise UnsupportedError("matmul: the tilelang kernel needs K >= 1 (a TMA descriptor cannot describe an empty "
                               "dim); K = 0 gives zeros on the cpu and nvidia backends")
    if k % 8 or n % 8 or any(t.data_ptr() % 16 for t in (out, a, b) if t.numel()):
        raise UnsupportedError(f"matmul: the tilelang kernel copies rows with TMA, which needs 16-byte row strides: "
                               f"K and N must be multiples of 8 (got K={k}, N={n}) and the tensors 16-byte aligned")
    if out.dtype not in (torch.float16, torch.bfloat16):
        raise UnsupportedError(f"matmul: the tilelang backend multiplies float16 and bfloat16 (T.gemm on {out.dtype} "
                               f"would round to tf32); the nvidia backend runs float32")
    if max(t.numel() for t in (out, a, b)) >= 2**31:
        raise UnsupportedError("matmul: the tilelang kernel takes int32 sizes: operands of 2^31 elements or more are "
                               "not expressible")


def _row_len(x: torch.Tensor) -> int:
    return x.shape[-1] if x.dim() else 1


def _operands(op: str, out: torch.Tensor, inputs) -> list[torch.Tensor]:
    """The kernel's arguments: flat views for element-wise ops, (rows, row_len) for row ops."""
    if op == "reduce_sum":
        x = inputs[0]
        return [x.reshape(-1, _row_len(x)) if x.numel() else x.new_empty((out.numel(), 0)), out.view(-1)]
    if op == "softmax":
        return [t.reshape(-1, _row_len(t)) for t in (*inputs, out)]
    if op == "matmul":  # (batch, M, K), (batch, K, N), (batch, M, N)
        return [t if t.dim() == 3 else t.unsqueeze(0) for t in (*inputs, out)]
    return [t.view(-1) for t in (*inputs, out)]


class KernelPlan:
    """A compiled kernel's host function and the dynamic sizes of one layout, called on
    buffers given per call: holds no tensor, so the eager plan cache can keep it.

    TileLang's Python call path re-derives pointers, dynamic sizes, device and stream from the
    tensors on every call (~50 us on a CPU). For one layout the sizes never change, so they
    are built here once, as TileLang's own wrapper builds them: one pointer per tensor
    parameter, then each dynamic size (int64) in the kernel's order, then the stream.
    Measured by tests/run_ops.py --mode bench (host us).
    """

    def __init__(self, kernel, operands: list[torch.Tensor]):
        adapter = kernel.adapter
        self._call, self._last_error = adapter.lib.call, adapter.lib.get_last_error
        sizes = []
        for ref_kind, tensor, dim, _scale in adapter.dynamic_symbolic_map.values():
            if ref_kind != 0:  # 0: a dimension of a tensor; our kernels take no stride or scalar sizes
                raise UnsupportedError(f"tilelang: dynamic symbol of kind {ref_kind} in {kernel}")
            sizes.append(ctypes.c_int64(operands[tensor].shape[dim]))
        self.sizes = sizes
        self.workspace_bytes = 0
        device = operands[0].device
        self._cuda_index = device.index if device.type == "cuda" else None

    def launch(self, args: list, stream: int | None = None) -> None:
        """Call with ``args`` (a ctypes pointer per operand, then the sizes) on ``stream``
        (the device's current stream when None)."""
        if stream is None:
            stream = 0 if self._cuda_index is None else torch._C._cuda_getCurrentRawStream(self._cuda_index)
        if self._call(*args, ctypes.c_void_p(stream)) != 0:
            raise RuntimeError(f"tilelang kernel failed: {self._last_error().decode(errors='replace')}")

    def call(self, out, *inputs_and_stream) -> int:
        """The plan-cache entry point, as binding.Plan.call: data pointers in the C order (out's
        first), then the stream; raises on failure, else returns 0."""
        *inputs, stream = inputs_and_stream
        self.launch([*map(ctypes.c_void_p, inputs), ctypes.c_void_p(out), *self.sizes], stream)
        return 0

    def close(self) -> None:
        pass


class DirectLaunch:
    """A KernelPlan bound to its operands: calling it launches with arguments built once
    (the prepared steady state)."""

    def __init__(self, kernel, operands: list[torch.Tensor]):
        self.plan = KernelPlan(kernel, operands)
        self._operands = operands  # the pointers below must stay valid as long as this object lives
        self._args = [ctypes.c_void_p(t.data_ptr()) for t in operands] + self.plan.sizes

    def __call__(self) -> None:
        self.plan.launch(self._args)


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

    def __init__(self, signature, out: torch.Tensor, inputs: tuple[torch.Tensor, ...]):
        op = signature.name
        super().__init__(op, signature.inputs, out, inputs, signature.in_place_ok)
        # copy converts between dtypes: its kernel is specialized on both
        dtypes = (TL_DTYPES[inputs[0].dtype], TL_DTYPES[out.dtype]) if op == "copy" else (TL_DTYPES[out.dtype],)
        gpu = out.device.type == "cuda"
        if op == "matmul":  # the tile config by the output's shape class
            extra = tuple(kernels(op).gpu_strategy(out.shape[-2], out.shape[-1]))
        else:
            extra = variant(op, gpu, _row_len(inputs[0]))
        self._kernel = compiled(op, dtypes, gpu, extra)
        # None for an empty output: a zero-block launch is an error on the GPU, and there is nothing to do
        self._launch = DirectLaunch(self._kernel, _operands(op, out, inputs)) if out.numel() else None
        # an empty input with a non-empty output (a sum over an empty dim) gets a stand-in operand
        self._plain_operands = all(t.numel() for t in inputs) or not out.numel()
        self._closed = False

    def run(self, *inputs: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        if self._closed:
            raise RuntimeError(f"prepared {self.op} is closed")
        if not inputs and out is None:  # the steady state: arguments were made once
            if self._launch is not None:
                self._launch()
            return self.out
        inputs, out = self._swap(inputs, out)
        if out.numel():
            self._kernel(*_operands(self.op, out, inputs))
        return out

    def detach_plan(self):
        """The kernel and sizes for the eager plan cache (no tensors), and close; None where the
        operands are not the tensors' own buffers (an empty input summed into a non-empty out)."""
        launch, plain = self._launch, self._plain_operands and not self._closed
        self.close()
        if not plain:
            return None
        return _NothingToLaunch() if launch is None else launch.plan

    def close(self) -> None:
        self._closed = True
        self._launch = None
        super().close()

    def __repr__(self) -> str:
        return f"<prepared {self.op} on tilelang: {'closed' if self._closed else tuple(self._layouts[0][0])}>"


def prepare(signature, out: torch.Tensor, inputs: dict[str, torch.Tensor], attrs: tuple) -> TileLangPrepared:
    """The tilelang end of bind_prepared: refuse what the kernels do not express, else compile."""
    _refuse(signature.name, out, inputs, attrs)
    return TileLangPrepared(signature, out, tuple(inputs.values()))
