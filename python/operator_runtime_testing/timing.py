"""Timing a callable the way the course teaches: warm up, then many samples, median.

On a GPU each sample is bracketed by CUDA events on the current stream (the host clock
would measure launch, not execution); several calls share a sample when one call is
too short for the events' ~0.5 us resolution. On the CPU, perf_counter brackets it.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable

import torch


@dataclass(frozen=True)
class Timing:
    median_ms: float
    p10_ms: float
    p90_ms: float
    samples: int

    @classmethod
    def of(cls, per_call_ms: list[float]) -> "Timing":
        q = statistics.quantiles(per_call_ms, n=10) if len(per_call_ms) > 1 else per_call_ms * 9
        return cls(statistics.median(per_call_ms), q[0], q[-1], len(per_call_ms))


def time_callable(fn: Callable[[], object], device: str, *, warmup_ms: float = 25.0, samples: int = 30,
                  sample_ms: float = 1.0) -> Timing:
    """Per-call latency of ``fn``; ``warmup_ms`` of calls first, then ``samples`` samples."""
    cuda = torch.device(device).type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    # Estimate one call's cost, then warm up for warmup_ms (clocks, caches, allocator).
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    estimate_ms = max((time.perf_counter() - t0) * 1e3, 1e-4)
    for _ in range(int(min(warmup_ms / estimate_ms, 10_000))):
        fn()
    sync()
    per_sample = max(1, int(sample_ms / estimate_ms))

    results = []
    for _ in range(samples):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(per_sample):
                fn()
            end.record()
            end.synchronize()
            results.append(start.elapsed_time(end) / per_sample)
        else:
            t0 = time.perf_counter()
            for _ in range(per_sample):
                fn()
            results.append((time.perf_counter() - t0) * 1e3 / per_sample)
    return Timing.of(results)


def host_time_us(fn: Callable[[], object], device: str, calls: int = 2000) -> float:
    """Host (CPU) time per call in microseconds: what the caller's thread spends issuing it."""
    cuda = torch.device(device).type == "cuda"
    for _ in range(100):
        fn()
    if cuda:
        torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):  # best of 5: host noise only adds time
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
        if cuda:
            torch.cuda.synchronize()
    return best
