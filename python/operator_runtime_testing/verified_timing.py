"""The trusted timing harness: how fast a kernel is, measured so that only computing the answer
makes it fast. The labs' performance checks, the grader's timed jobs and the chapters' "time it
yourself" cells all time through ``measure``, so a student sees the number the grader sees.

What a kernel cannot get away with, and why (kernel leaderboards met each of these):
  - a fixed shape or a hard-coded size: several shapes per check, one of them odd and drawn
    from the caller's seed (the grader's is secret), combined by geometric mean;
  - caching by pointer, or finding last call's (or torch's) result in a reused allocation:
    SETS buffer sets rotate so no two consecutive calls see the same buffers, and the output
    is poisoned (NaN) before every call;
  - caching by input fingerprint: every call gets freshly drawn inputs;
  - skipping part of the work, rescaling, lower precision than asked, or doing nothing after
    the first few calls: every timed call's output is compared with a float64 reference with
    the correctness check's tolerances (tolerances.py), and its inputs must be unchanged;
  - work left running past the timer, or launched on another stream: each call is timed on two
    clocks, the current stream's events around it and an interval that closes after a
    device-wide synchronisation (less that sync's own cost, measured with an empty call), and
    the slower counts. The stream's events keep the subtraction from flattering honest work
    (the sync's cost varies by several microseconds); the device-wide interval sees the rest;
  - a warm cache: L2 is flushed before every sample (a write of twice its size);
  - all of the above slipping through anyway: physics referees. The bytes (each input read
    once, the output written once) and FLOPs come from the operator's record; a memory-bound
    time above PHYSICAL_MARGIN x the copy ceiling measured in this run, or a matmul above
    PHYSICAL_MARGIN x torch's half-precision tensor-core rate, is impossible and raised as such.

    result = measure("softmax", lambda inputs, out: kernel(*inputs, out=out), "cuda", seed=1234)
    result.ratio, result.summary          # torch's time / ours (geometric mean), one line
"""

from __future__ import annotations

import contextlib
import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

import torch

from .operators import get
from .tolerances import TOLERANCES

SETS = 3  # buffer sets in rotation
SAMPLES = 15  # timed calls per shape and contender (each verified); the median is reported
WARMUP = 2  # calls per shape and contender before sampling (clocks, lazy loading, allocator)
PHYSICAL_MARGIN = 1.15  # above this many times the measured ceiling a time is rejected, not rewarded
Run = Callable[[list[torch.Tensor], torch.Tensor], object]  # (inputs, out) -> None; writes out


class WrongResult(AssertionError):
    """A timed call computed a wrong result (or changed its inputs)."""


class ImpossibleTiming(AssertionError):
    """A time faster than the hardware allows: a bug in the measurement or a cheat, never a result."""


@dataclass
class CallTime:
    """One call (or a median of calls) on two clocks, in ms: ``stream_ms`` between events on the
    current stream around the call, ``device_ms`` until a device-wide sync after it returned."""
    stream_ms: float
    device_ms: float


def _net(took: CallTime, sync_ms: float) -> float:
    """A call's time: the device-wide interval less the sync's own cost (``sync_ms``, an empty
    call's), but never less than the stream's events measured (an overestimated sync cost must
    not make honest work look faster than it ran)."""
    return max(took.device_ms - sync_ms, took.stream_ms, 1e-6)


@dataclass
class ShapeTiming:
    shape: tuple
    ours_ms: float
    torch_ms: float
    bytes: int
    flops: int | None

    @property
    def ratio(self) -> float:
        return self.torch_ms / self.ours_ms

    def rate(self, ms: float) -> float:
        """GB/s for a memory-bound op, TFLOP/s for matmul."""
        return (self.flops / ms / 1e9) if self.flops else (self.bytes / ms / 1e6)


@dataclass
class Measurement:
    op: str
    device: str
    dtype: torch.dtype
    shapes: list[ShapeTiming] = field(default_factory=list)
    ceiling: float = 0.0  # GB/s (memory-bound) or TFLOP/s (matmul), measured in this run

    @property
    def ratio(self) -> float:
        """torch's time over ours, the geometric mean over the shapes."""
        return math.exp(statistics.fmean(math.log(s.ratio) for s in self.shapes))

    @property
    def summary(self) -> str:
        unit = "TFLOP/s" if self.shapes[0].flops else "GB/s"
        parts = [f"{'x'.join(map(str, s.shape))}: {_num(s.rate(s.ours_ms))} {unit} vs torch "
                 f"{_num(s.rate(s.torch_ms))} ({s.ratio:.2f}x)" for s in self.shapes]
        return (f"{self.op}: {self.ratio:.2f}x torch (geometric mean; {'; '.join(parts)}; "
                f"ceiling {_num(self.ceiling)} {unit})")


def _num(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.2g}"


def timed_shapes(op: str, seed: int) -> list[tuple]:
    """The record's benchmark shape (larger than L2) and an odd one of similar size drawn from
    ``seed``: every dimension between 5/8 and 7/8 of the benchmark's, odd."""
    bench = tuple(get(op).bench_shape)
    rng = random.Random(f"timed:{seed}:{op}")
    return [bench, tuple(rng.randrange(d * 5 // 8, d * 7 // 8) | 1 for d in bench)]


def measure(op: str, run: Run, device: str, seed: int, dtype: torch.dtype = torch.float32,
            shapes: list[tuple] | None = None, samples: int = SAMPLES) -> Measurement:
    """Times ``run`` against torch's peer (the record's ``torch_op``) on each shape, every call
    verified; raises WrongResult or ImpossibleTiming (see the module's docstring)."""
    record = get(op)
    with _full_precision():  # torch's peer held to the precision the check demands
        result = Measurement(op, device, dtype, ceiling=ceiling(op, device))
        gen = torch.Generator(device=device).manual_seed(seed)
        for shape in shapes or timed_shapes(op, seed):
            bench = _Bench(op, shape, dtype, device, gen)
            # the contenders take turns, call by call, so drift (clocks, a neighbour's load) hits all alike
            empty, ours, theirs = bench.time([(lambda inputs, out: None, "none"), (run, "out"),
                                              (lambda inputs, out: record.torch_op(out, *inputs), "peer")], samples)
            ours, theirs = (_net(t, empty.device_ms) for t in (ours, theirs))
            timing = ShapeTiming(tuple(shape), ours, theirs, bench.bytes, record.flops(shape) if record.flops else None)
            result.shapes.append(timing)
            referee(op, timing, result.ceiling, device)
            if device == "cuda" and timing.rate(theirs) > PHYSICAL_MARGIN * result.ceiling:  # the harness's own bug
                raise RuntimeError(f"the harness timed torch's {op} above the measured ceiling "
                                   f"({timing.rate(theirs):.0f} vs {result.ceiling:.0f}): the measurement is broken, "
                                   "not the kernel")
            del bench
    return result


@contextlib.contextmanager
def _full_precision():
    """torch's peer computes at the precision the check demands of the kernel: by default cuBLAS may
    reduce float16/bfloat16 products in 16 bits (torch's allow_*_reduced_precision_reduction), whose
    sums at K in the thousands fall outside the correctness check's tolerance, and float32 may go
    through tf32. The same rules for both contenders, restored afterwards."""
    flags = torch.backends.cuda.matmul
    names = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction", "allow_tf32")
    saved = {name: getattr(flags, name) for name in names}
    try:
        for name in names:
            setattr(flags, name, False)
        yield
    finally:
        for name, value in saved.items():
            setattr(flags, name, value)


def referee(op: str, timing: ShapeTiming, ceiling_rate: float, device: str) -> None:
    """Raises ImpossibleTiming when ``timing`` is faster than PHYSICAL_MARGIN x what the device can
    do. GPUs only: the harness flushes a GPU's L2, while a CPU's caches hold small shapes whole."""
    rate = timing.rate(timing.ours_ms)
    if device == "cuda" and rate > PHYSICAL_MARGIN * ceiling_rate:
        unit = "TFLOP/s" if timing.flops else "GB/s"
        raise ImpossibleTiming(
            f"{op} timed at {rate:.0f} {unit} for shape {'x'.join(map(str, timing.shape))}, above what this GPU "
            f"can do ({ceiling_rate:.0f} {unit}, measured in this run): no kernel is that fast, so the time cannot "
            "be the kernel's work (work outside the timed interval, or results not computed). Rejected, and "
            "flagged for the instructor")


class _Bench:
    """SETS buffer sets of one shape, and the timed, verified call."""

    def __init__(self, op: str, shape: tuple, dtype: torch.dtype, device: str, gen: torch.Generator):
        record = get(op)
        self.op, self.device, self.gen, self.dtype = op, device, gen, dtype
        self.inputs = [[torch.empty(s, dtype=dtype, device=device) for s in record.input_shapes(shape)]
                       for _ in range(SETS)]
        self.outs = [torch.empty(record.output_shape(shape), dtype=dtype, device=device) for _ in range(SETS)]
        self.bytes = sum(t.numel() * t.element_size() for t in (*self.inputs[0], self.outs[0]))
        self.shape = shape
        self.flush = _flush_buffer(device)

    def time(self, contenders: list[tuple[Run, str]], samples: int) -> list[CallTime]:
        """Median times per contender of ``samples`` calls each (after WARMUP), taking turns, each
        call on fresh inputs and verified. A contender's check: "out" (its output), "peer" (torch's
        op, whose result may be the tensor it returns: softmax has no out= form) or "none"."""
        times: list[list[CallTime]] = [[] for _ in contenders]
        for i in range(WARMUP + samples):
            for c, ((run, check), mine) in enumerate(zip(contenders, times)):
                k = (i + c) % SETS  # a contender's next call, and the next contender, take the next set
                inputs, out = self.inputs[k], self.outs[k]
                for t in inputs:  # fresh values every call: nothing to cache by fingerprint
                    t.copy_(torch.randn(t.shape, generator=self.gen, device=self.device, dtype=torch.float32))
                kept = [t.clone() for t in inputs]
                out.fill_(float("nan"))  # a call that writes nothing cannot pass as the last one's result
                took, returned = _timed_call(run, inputs, out, self.flush, self.device)
                if check != "none":
                    got = returned if check == "peer" and isinstance(returned, torch.Tensor) else out
                    self._verify(kept, inputs, got, i)
                if i >= WARMUP:
                    mine.append(took)
        return [CallTime(statistics.median(t.stream_ms for t in mine), statistics.median(t.device_ms for t in mine))
                for mine in times]

    def _verify(self, kept: list[torch.Tensor], inputs: list[torch.Tensor], out: torch.Tensor, call: int) -> None:
        where = f"timed call {call + 1} on shape {'x'.join(map(str, self.shape))}"
        if not all(torch.equal(a, b) for a, b in zip(kept, inputs)):
            raise WrongResult(f"{self.op}: {where} changed its inputs: a kernel only reads them")
        bad, total = _mismatches(self.op, out, kept)
        if bad:
            raise WrongResult(f"{self.op}: {where} computed a wrong result ({bad} of {total} elements off torch's "
                              "float64 answer beyond the correctness check's tolerance): every timed call is "
                              "checked, so a kernel that skips work, computes in lower precision or returns a "
                              "remembered result fails")


def _mismatches(op: str, out: torch.Tensor, inputs: list[torch.Tensor]) -> tuple[int, int]:
    """(elements of ``out`` outside tolerance of the float64 reference, all elements), on the device."""
    record = get(op)
    want = record.reference(*[t.double() for t in inputs]).reshape(out.shape)
    got = out.double()
    if record.exact:
        return int((~((got == want.to(out.dtype).double()) | (got.isnan() & want.isnan()))).sum()), out.numel()
    want = want.to(out.dtype).double()  # rounded to the output's dtype, as the correctness check does
    rtol, atol = TOLERANCES[out.dtype]
    extra = record.extra_atol(inputs)
    bound = atol + _broadcast(extra, want) + rtol * want.abs()
    ok = ((got - want).abs() <= bound) | (got.isnan() & want.isnan()) | ((got == want) & want.isinf())
    return int((~ok).sum()), out.numel()


def _broadcast(extra, like: torch.Tensor) -> torch.Tensor:
    """The record's extra atol (a scalar, or one value per output row) against the output."""
    extra = torch.as_tensor(extra, dtype=torch.float64, device=like.device)
    return extra.reshape(extra.shape + (1,) * (like.dim() - extra.dim())) if extra.dim() else extra


def _timed_call(run: Run, inputs, out, flush: torch.Tensor | None, device: str) -> tuple[CallTime, object]:
    """(one call's CallTime, what it returned): L2 flushed first; the device interval closes after
    a device-wide sync, so work left on any stream is inside it."""
    if device != "cuda":
        t0 = time.perf_counter()
        returned = run(inputs, out)
        ms = (time.perf_counter() - t0) * 1e3
        return CallTime(ms, ms), returned
    flush.zero_()  # evicts what the refill left in L2
    torch.cuda.synchronize()
    start, done, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
    start.record()
    returned = run(inputs, out)
    done.record()  # after the call's work on the current stream
    torch.cuda.synchronize()  # every stream, not only the current one
    end.record()
    end.synchronize()
    return CallTime(start.elapsed_time(done), start.elapsed_time(end)), returned


_flush_buffers: dict = {}


def _flush_buffer(device: str) -> torch.Tensor | None:
    if device != "cuda":
        return None
    index = torch.cuda.current_device()
    if index not in _flush_buffers:
        l2 = getattr(torch.cuda.get_device_properties(index), "L2_cache_size", 64 << 20) or 64 << 20
        _flush_buffers[index] = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    return _flush_buffers[index]


_ceilings: dict = {}


def ceiling(op: str, device: str) -> float:
    """What this device can do for ``op``, measured once per process with this harness's own
    procedure: the copy ceiling in GB/s (torch's copy of 2^27 floats, larger than any L2) for a
    memory-bound op, torch's half-precision matmul at 8192^3 in TFLOP/s for matmul (a float32
    kernel cannot beat the tensor cores' f16 rate)."""
    compute = get(op).flops is not None
    key = (device, torch.cuda.current_device() if device == "cuda" else None, compute)
    if key not in _ceilings:
        flush = _flush_buffer(device)
        sync_ms = statistics.median(_timed_call(lambda i, o: None, [], None, flush, device)[0].device_ms
                                    for _ in range(9))

        def best(call) -> float:  # the fastest of several: a ceiling is what the device can do
            return min(_net(_timed_call(call, [], None, flush, device)[0], sync_ms) for _ in range(7))

        if compute:
            n = 8192 if device == "cuda" else 512
            a = torch.randn(n, n, device=device, dtype=torch.float16 if device == "cuda" else torch.float32)
            c = torch.empty_like(a)
            _ceilings[key] = 2 * n ** 3 / best(lambda i, o: torch.matmul(a, a, out=c)) / 1e9
        else:
            n = (1 << 27) if device == "cuda" else (1 << 24)
            a = torch.randn(n, device=device)
            c = torch.empty_like(a)
            _ceilings[key] = 2 * n * 4 / best(lambda i, o: c.copy_(a)) / 1e6
    return _ceilings[key]
