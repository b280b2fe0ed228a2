"""Binding an operator's four C functions and running them: the ``bind_*`` helpers.

An operator is described once by an ``OpSignature`` (signature.py: its C name, input names in C
order, attribute types); everything else here is generic over operators.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools

import torch

from . import checks
from .backends import resolve_backend
from .native import TensorView, check_status, load_library
from .prepared import PreparedBase
from .signature import OpSignature


class BoundOp:
    """One operator's create / workspace / execute / destroy in one backend library."""

    def __init__(self, backend: str, signature: OpSignature):
        lib = load_library(backend)
        self.lib, self.backend, self.signature = lib, backend, signature
        name, n_in = signature.name, len(signature.inputs)
        view_p, ptr = ctypes.POINTER(TensorView), ctypes.c_void_p

        def fn(symbol, argtypes):
            f = getattr(lib, symbol)
            f.argtypes, f.restype = argtypes, ctypes.c_int
            return f

        self.create = fn(f"oprt_create_{name}_descriptor",
                         [ctypes.POINTER(ptr), view_p] + [view_p] * n_in + list(signature.attrs))
        self.workspace_size = fn(f"oprt_get_{name}_workspace_size", [ptr, ctypes.POINTER(ctypes.c_size_t)])
        self.execute = fn(f"oprt_execute_{name}", [ptr, ptr, ctypes.c_size_t, ptr] + [ptr] * n_in + [ptr])
        self.destroy = fn(f"oprt_destroy_{name}_descriptor", [ptr])

    def check(self, function: str, code: int) -> None:
        check_status(self.lib, function, code)


_bound: dict[tuple[str, str], BoundOp] = {}


def bind_op(backend: str, signature: OpSignature) -> BoundOp:
    key = (backend, signature.name)
    if key not in _bound:
        _bound[key] = BoundOp(backend, signature)
    return _bound[key]


def _stream_getter(device: torch.device):
    """A function returning the handle of the device's current stream (None on the CPU).

    Kernels go on torch's current stream at each call, as torch's own ops do, so they
    order correctly with the caller's torch work and honour `with torch.cuda.stream(s)`.
    """
    if device.type != "cuda":
        return lambda: None
    index = device.index if device.index is not None else torch.cuda.current_device()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # ~10x cheaper than the public API
    if raw is not None:
        return lambda: raw(index)
    return lambda: torch.cuda.current_stream(index).cuda_stream


class Plan:
    """One operator's descriptor and workspace for one layout (shapes, strides, dtypes, device)
    and attributes: what create() and get_workspace_size() made, with no tensor of the caller.

    Buffers are passed per execute(), so one plan serves any tensors of its layout; the eager
    calls keep plans in a cache (plan_cache.py) for that. The workspace belongs to the plan:
    two calls may not execute one plan at the same time unless on one CUDA stream.
    """

    def __init__(self, bound: BoundOp, out: torch.Tensor, inputs: tuple[torch.Tensor, ...], attrs: tuple):
        self._bound, self.op = bound, bound.signature.name
        self._handle = ctypes.c_void_p()
        device = out.device
        # The C side sizes the workspace for the current device: make it the tensors' device,
        # so the plan depends on its layout alone (not on which device was current).
        multi_gpu = device.type == "cuda" and torch.cuda.device_count() > 1
        self.device_index = device.index if multi_gpu else None
        with torch.cuda.device(device) if multi_gpu else contextlib.nullcontext():
            views = [TensorView.of(t) for t in (out, *inputs)]
            bound.check(f"oprt_create_{self.op}_descriptor",
                        bound.create(ctypes.byref(self._handle), *[ctypes.byref(v) for v in views], *attrs))
            size = ctypes.c_size_t()
            bound.check(f"oprt_get_{self.op}_workspace_size", bound.workspace_size(self._handle, ctypes.byref(size)))
            self.workspace = torch.empty(size.value, dtype=torch.uint8, device=device) if size.value else None
        self.execute_fn, self.workspace_bytes = bound.execute, size.value
        # The arguments before the buffers: descriptor, workspace pointer and size.
        self.head = (self._handle, self.workspace.data_ptr() if size.value else None, size.value)
        # call(out pointer, *input pointers, stream) -> status: the eager calls' hot path
        self.call = execute = functools.partial(bound.execute, *self.head)
        if self.device_index is not None:
            index = self.device_index

            def call_on_device(*args) -> int:  # (a closure, not a method: no cycle keeps the plan alive)
                with torch.cuda.device(index):  # the C side launches on the current device
                    return execute(*args)

            self.call = call_on_device
        self.stream = _stream_getter(device)

    def execute(self, pointers, stream) -> None:
        """Run on buffers (out's data pointer, then each input's) of this plan's layout, on ``stream``."""
        code = self.call(*pointers, stream)
        if code:
            self.raise_for(code)

    def raise_for(self, code: int) -> None:
        self._bound.check(f"oprt_execute_{self.op}", code)

    def close(self) -> None:
        """Destroy the descriptor and free the workspace; safe to call twice."""
        handle, self._handle = self._handle, None
        self.workspace = self.head = self.call = None
        if handle is not None and handle.value is not None:
            self._bound.check(f"oprt_destroy_{self.op}_descriptor", self._bound.destroy(handle))

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class PreparedOp(PreparedBase):
    """A descriptor and workspace made once, for steady-state execution.

    ``run()`` executes on the tensors it was prepared with; ``run(*inputs, out=...)``
    executes on new tensors of the same shape, strides, dtype and device. The prepared
    tensors stay referenced until ``close()``, so their memory cannot be freed under the
    descriptor. Use as a context manager to close it deterministically.
    """

    def __init__(self, bound: BoundOp, out: torch.Tensor, inputs: tuple[torch.Tensor, ...], attrs: tuple):
        super().__init__(bound.signature.name, bound.signature.inputs, out, inputs, bound.signature.in_place_ok)
        self.backend = bound.backend
        self._plan = plan = Plan(bound, out, inputs, attrs)
        self.workspace = plan.workspace
        # run() with no arguments reuses these: the steady state is one ctypes call.
        self._execute, self._stream = plan.execute_fn, plan.stream
        self._args = (*plan.head, out.data_ptr(), *[t.data_ptr() for t in inputs])

    def run(self, *inputs: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Execute; returns the output tensor written."""
        if self._args is None:
            raise RuntimeError(f"prepared {self.op} is closed")
        plan = self._plan
        if inputs or out is not None:
            inputs, out = self._swap(inputs, out)
            plan.execute((out.data_ptr(), *[t.data_ptr() for t in inputs]), self._stream())
            return out
        if plan.device_index is None:
            code = self._execute(*self._args, self._stream())
            if code:
                plan.raise_for(code)
        else:
            plan.execute(self._args[3:], self._stream())
        return self.out

    def detach_plan(self) -> Plan | None:
        """Hand the descriptor and workspace over (to the eager plan cache) and close this
        prepared op without destroying them; None once closed."""
        plan, self._plan = self._plan, None
        self._args = self.workspace = None
        PreparedBase.close(self)
        return plan

    def close(self) -> None:
        """Destroy the descriptor and drop the tensors; safe to call twice."""
        plan, self._plan = self._plan, None
        self._args = self.workspace = None
        super().close()
        if plan is not None:
            plan.close()

    def __repr__(self) -> str:
        state = "closed" if self._args is None else f"out {tuple(self._layouts[0][0])}"
        return f"<prepared {self.op} on {self.backend}: {state}>"


def bind_prepared(signature: OpSignature, out: torch.Tensor, inputs: dict[str, torch.Tensor], attrs: tuple,
                  backend: str | None) -> PreparedOp:
    """Choose the backend, check aliasing, create the descriptor: the common end of every prepare_<op>."""
    backend = resolve_backend(signature.name, {"out": out, **inputs}, backend)
    checks.disjoint_from_out(signature.name, out, inputs, signature.in_place_ok)
    if backend == "tilelang":  # kernels compiled by TileLang from Python, not a C library
        from . import tilelang_backend

        return tilelang_backend.prepare(signature, out, inputs, attrs)
    return PreparedOp(bind_op(backend, signature), out, tuple(inputs.values()), attrs)
