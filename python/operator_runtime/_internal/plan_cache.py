"""The eager calls' plan cache: a descriptor and workspace per layout, made once and reused.

``ort.softmax(x, -1, out=y)`` would otherwise create, size and destroy a descriptor (and
allocate a workspace) on every call. Here the first call of a layout runs the whole
prepare_<op> path (every check, every error message); later calls of the same key skip
straight to execute.

The key is (op, the backend asked for, the current CUDA stream on a GPU, each attribute as
given with whether it is a bool, and per tensor (strided only): shape, strides, dtype,
device). Everything prepare_<op> checks or create() plans from is a function of that key,
except where the buffers lie in memory: so out's overlap with the inputs is checked on every
call, from byte extents computed once per key. A plan holds no reference to a caller's
tensor, only its own descriptor and workspace.

Threads: a call takes its plan out of the cache (an atomic dict pop) and puts it back after
execute, so no two calls ever use one plan (its workspace) at the same time, and eviction
never destroys a plan in use; a second thread with the same key meanwhile makes a plan of
its own (the second one put back is destroyed). On a GPU the stream is in the key, so the
asynchronous kernels that use one workspace are ordered on one stream.

Bounded: at most ``maxsize`` idle plans, the least recently used destroyed first, none with
a workspace over MAX_WORKSPACE_BYTES. Nothing outside invalidates it: a plan depends on its
key alone (multi-GPU plans are created on their tensors' device). Calls captured into a CUDA
graph bypass it (see _cuda_stream).
"""

from __future__ import annotations

import atexit
import os
import threading
from typing import Callable, NamedTuple

import torch

from . import checks
from ..errors import UnsupportedError

MAXSIZE = 64
# A plan with a larger workspace is not kept: it would pin that memory while idle, and a call
# that needs so much scratch moves far more data than making the descriptor costs.
MAX_WORKSPACE_BYTES = 1 << 20

_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_raw_capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None)


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    size: int       # plans held (idle) now
    maxsize: int


class _Entry:
    """A plan, and ``run(out, inputs, stream)``: the per-call overlap check for its layout and
    the plan's call, as one closure built for the op's arity (no loop, list or zip per call)."""

    __slots__ = ("plan", "run")

    def __init__(self, plan, out: torch.Tensor, inputs: tuple[torch.Tensor, ...], in_place_ok: bool,
                 signature=None):
        self.plan = plan
        self.run = _runner(getattr(plan, "call", None), out, inputs, in_place_ok, signature)

    def close(self) -> None:
        self.plan.close()


def _runner(call, out: torch.Tensor, inputs: tuple[torch.Tensor, ...], in_place_ok: bool, signature):
    """run(out, inputs, stream) -> the plan's status: checks that out's bytes (their extent is
    the layout's, computed here once) overlap no input's, except an input at out's very address
    and of out's layout where in-place is allowed (a += b); raises the prepare path's error."""
    out_extent = _extent(out)
    out_layout = (out.shape, out.stride(), out.dtype)
    # per input: byte extent, and whether an input at out's very address is allowed
    extents = [_extent(t) for t in inputs]
    same_ok = [in_place_ok and (t.shape, t.stride(), t.dtype) == out_layout for t in inputs]

    def overlap(out, inputs):  # the prepare path's check and error (raises)
        checks.disjoint_from_out(signature.name, out, dict(zip(signature.inputs, inputs)), in_place_ok)

    if len(inputs) == 1:
        (extent_a,), (ok_a,) = extents, same_ok

        def run(out, inputs, stream):
            o = out.data_ptr()
            a = inputs[0].data_ptr()
            if a < o + out_extent and o < a + extent_a and not (ok_a and a == o):
                overlap(out, inputs)
            return call(o, a, stream)
    elif len(inputs) == 2:
        (extent_a, extent_b), (ok_a, ok_b) = extents, same_ok

        def run(out, inputs, stream):
            o = out.data_ptr()
            x, y = inputs
            a, b = x.data_ptr(), y.data_ptr()
            o_end = o + out_extent
            if (a < o_end and o < a + extent_a and not (ok_a and a == o)) or \
                    (b < o_end and o < b + extent_b and not (ok_b and b == o)):
                overlap(out, inputs)
            return call(o, a, b, stream)
    else:
        def run(out, inputs, stream):
            o = out.data_ptr()
            o_end = o + out_extent
            pointers = [o]
            for t, extent, ok in zip(inputs, extents, same_ok):
                p = t.data_ptr()
                if p < o_end and o < p + extent and not (ok and p == o):
                    overlap(out, inputs)
                pointers.append(p)
            return call(*pointers, stream)
    return run


def _extent(t: torch.Tensor) -> int:
    """Bytes from t's first element to just past its last (0 when empty): checks._byte_range's span."""
    if t.numel() == 0:
        return 0
    return (sum((size - 1) * stride for size, stride in zip(t.shape, t.stride())) + 1) * t.element_size()


class PlanCache:
    """Idle plans by key, one per key, least recently used first; thread-safe, bounded.

    A hit pops its plan (one atomic dict operation: two threads never get the same plan) and
    put() inserts it again, at the end: so the dict's order is the LRU order, for free.
    """

    def __init__(self, maxsize: int = MAXSIZE):
        self.maxsize = maxsize
        self._idle: dict[tuple, _Entry] = {}
        self._lock = threading.Lock()  # eviction and clear(); take and put need none
        self._hits = self._misses = 0  # statistics, counted without a lock: exact in one thread

    def take(self, key: tuple) -> _Entry | None:
        """The idle plan of ``key``, now the caller's alone until put() back; None on a miss."""
        entry = self._idle.pop(key, None)
        if entry is None:
            self._misses += 1
        else:
            self._hits += 1
        return entry

    def put(self, key: tuple, entry: _Entry) -> None:
        """Keep ``entry`` (taken, or new) as the idle plan of ``key``; evict beyond maxsize."""
        if self._idle.setdefault(key, entry) is not entry:
            entry.close()  # another thread's plan of this key came back first: one is enough
        elif len(self._idle) > self.maxsize:
            self._evict()

    def _evict(self) -> None:
        with self._lock:
            while len(self._idle) > self.maxsize:
                try:
                    oldest = next(iter(self._idle))
                    entry = self._idle.pop(oldest)
                except (StopIteration, KeyError, RuntimeError):  # taken meanwhile by a call: look again
                    continue
                entry.close()  # idle, so no call is using it

    def info(self) -> CacheInfo:
        return CacheInfo(self._hits, self._misses, len(self._idle), self.maxsize)

    def clear(self) -> None:
        with self._lock:
            self._hits = self._misses = 0
            while self._idle:
                try:
                    entry = self._idle.pop(next(iter(self._idle)))
                except (StopIteration, KeyError, RuntimeError):
                    continue
                entry.close()


_cache = PlanCache()
_idle = _cache._idle  # run_eager's hit path uses the dict itself (never replaced: clear() empties it)
# Destroy the plans while the libraries and the CUDA context are still there.
atexit.register(_cache.clear)
if hasattr(os, "register_at_fork"):  # a fork while another thread held the lock must not deadlock the child
    os.register_at_fork(after_in_child=lambda: setattr(_cache, "_lock", threading.Lock()))


def cache_info() -> CacheInfo:
    """Hits, misses and size of the eager calls' plan cache (as functools.lru_cache reports)."""
    return _cache.info()


def cache_clear() -> None:
    """Destroy every cached plan and reset the counts (plans in use finish first, then go)."""
    _cache.clear()


def _key(op: str, backend, out, inputs: tuple, attrs: tuple) -> tuple | None:
    """The plan's key; its item 2 is the current CUDA stream (None on the CPU). None when the
    call is not one the cache keys (anything unusual: the prepare path checks and reports it).

    Nothing here checks the arguments: a key is only ever found when prepare_<op> accepted the
    same layouts before (torch's lazy negation bit counts as layout: checks.float_tensor refuses it),
    so an input that is not a float32/16-bit strided tensor of rank <= 8 (whose key no plan has) misses and goes to the prepare path, which reports it; one without
    the attributes read here (not a tensor, no strides) raises, and run_eager does the same.
    Built in one expression per arity: this runs on every eager call (issue 16's host time)."""
    if backend is not None and type(backend) is not str:
        return None
    # attribute types in the key: keepdim=1 and dim=True are errors, not hits of True and 1
    types = tuple(map(type, attrs)) if attrs else ()
    stream = None
    if out.is_cuda:
        stream = _cuda_stream(out.get_device())
        if stream is None:  # capturing a CUDA graph: see _cuda_stream
            return None
    if len(inputs) == 1:
        (a,) = inputs
        return (op, backend, stream, attrs, types, out.shape, out.stride(), out.dtype, out.device, out.is_neg(),
                a.shape, a.stride(), a.dtype, a.device, a.is_neg())
    if len(inputs) == 2:
        a, b = inputs
        return (op, backend, stream, attrs, types, out.shape, out.stride(), out.dtype, out.device, out.is_neg(),
                a.shape, a.stride(), a.dtype, a.device, a.is_neg(), b.shape, b.stride(), b.dtype, b.device, b.is_neg())
    key = (op, backend, stream, attrs, types, out.shape, out.stride(), out.dtype, out.device, out.is_neg())
    for t in inputs:
        key += (t.shape, t.stride(), t.dtype, t.device, t.is_neg())
    return key


def _cuda_stream(index: int) -> int | None:
    """The handle of device ``index``'s current stream, or None while that stream is capturing
    a CUDA graph. A plan made outside the capture would put its workspace into the graph and
    still hand it to later calls (or free it on eviction while the graph replays); one made
    inside would hold the graph's private memory. So captured calls go the prepare way, as
    before the cache: workspace from the graph's pool.

    The legacy default stream (handle 0, torch's default) cannot capture (CUDA refuses
    cudaStreamBeginCapture on it, and torch.cuda.graph asks for a side stream), so it is not
    asked: one C call less on an eager call's usual path."""
    if _raw_stream is not None and _raw_capturing is not None:  # ~10x cheaper than the public API
        stream = _raw_stream(index)
        return None if stream and _raw_capturing() else stream
    stream = torch.cuda.current_stream(index)
    return None if stream.cuda_stream and torch.cuda.is_current_stream_capturing() else stream.cuda_stream


def run_eager(signature, out: torch.Tensor, inputs: tuple[torch.Tensor, ...], attrs: tuple, backend,
              prepare: Callable[..., object]) -> torch.Tensor:
    """An eager call: execute the cached plan of this key, or run the op's prepare_<op> (with
    all its checks) once, as ``prepare(out, *inputs, *attrs, backend=backend)``, and keep its
    plan. ``inputs`` and ``attrs`` are as the caller gave them: unchecked (see _key).

    The hit path is take and put of PlanCache written out (the same dict operations), and the
    entry's run(): each step here costs host time on every call."""
    try:
        key = _key(signature.name, backend, out, inputs, attrs)
        entry = _idle.pop(key, None) if key is not None else None
    except Exception:  # not a tensor, no strides, an unhashable attribute: prepare() says what is wrong
        key = entry = None
    if entry is not None:
        _cache._hits += 1
        try:
            code = entry.run(out, inputs, key[2])  # the layouts are the key's; only the addresses are new
            if code:
                entry.plan.raise_for(code)
            refused = False
        except UnsupportedError:  # the plan cannot take these addresses (tilelang's TMA matmul and a
            refused = True        # misaligned view): prepare() below finds the way that can (a staged one)
        finally:
            if _idle.setdefault(key, entry) is not entry:  # PlanCache.put
                entry.close()
            elif len(_idle) > _cache.maxsize:
                _cache._evict()
        if not refused:
            return out
    if key is not None:
        _cache._misses += 1
    with prepare(out, *inputs, *attrs, backend=backend) as prepared:
        prepared.run()
        plan = prepared.detach_plan() if key is not None else None
    if plan is not None:
        if plan.workspace_bytes > MAX_WORKSPACE_BYTES:
            plan.close()
        else:
            _cache.put(key, _Entry(plan, out, inputs, signature.in_place_ok, signature))
    return out
