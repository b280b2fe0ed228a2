"""The trusted timing harness (operator_runtime_testing/verified_timing.py) against the cheats
kernel leaderboards met, on the CPU: every one of them must fail with WrongResult, an honest
kernel must pass, and a time faster than the device can go must be refused. The same harness
times CUDA kernels on the GPU (the hostile performance class in tests/labs/hostile/perf_*.py,
graded by scripts/gpu_check.sh); here its logic is checked with Python "kernels"."""

from __future__ import annotations

import pytest
import torch

from operator_runtime_testing import verified_timing as vt

SHAPES = {"copy": [(4099,), (65_537,)], "softmax": [(33, 1001)], "reduce_sum": [(17, 3001)], "matmul": [(33, 47, 65)]}


def honest(op):
    return {"copy": lambda i, o: o.copy_(i[0]),
            "softmax": lambda i, o: o.copy_(torch.softmax(i[0].double(), -1)),
            "reduce_sum": lambda i, o: o.copy_(i[0].double().sum(-1)),
            "matmul": lambda i, o: o.copy_(i[0].double() @ i[1].double())}[op]


@pytest.mark.parametrize("op", sorted(SHAPES))
def test_an_honest_kernel_is_timed_against_torch(op):
    result = vt.measure(op, honest(op), "cpu", seed=7, shapes=SHAPES[op], samples=3)
    assert len(result.shapes) == len(SHAPES[op]) and result.ratio > 0
    assert f"{op}:" in result.summary and "torch" in result.summary


def pointer_cache():
    seen = set()

    def run(i, o):
        if i[0].data_ptr() in seen:
            return  # "I computed this one already"
        seen.add(i[0].data_ptr())
        o.copy_(i[0])
    return run


def after_three_calls():
    calls = [0]

    def run(i, o):
        calls[0] += 1
        if calls[0] <= 3:
            o.copy_(i[0])
    return run


CHEATS = {
    "writes nothing (the allocation's old contents)": lambda: (lambda i, o: None),
    "skips a size it recognises": lambda: (lambda i, o: None if i[0].numel() == 65_537 else o.copy_(i[0])),
    "caches by pointer": pointer_cache,
    "stops after three calls": after_three_calls,
    "lower precision than asked": lambda: (lambda i, o: o.copy_(i[0].half())),
    "skips half the work": lambda: (lambda i, o: o[: o.numel() // 2].copy_(i[0][: o.numel() // 2])),
    "writes its inputs too": lambda: (lambda i, o: (o.copy_(i[0]), i[0].zero_())),
}


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_every_timed_call_is_verified(cheat):
    with pytest.raises(vt.WrongResult, match="timed call"):
        vt.measure("copy", CHEATS[cheat](), "cpu", seed=3, shapes=SHAPES["copy"], samples=4)


def test_a_fingerprint_cache_never_hits():
    """Fresh values every call: a result cached by input fingerprint is never there to reuse."""
    cache, hits = {}, [0]

    def run(i, o):
        key = (i[0][0].item(), i[0][-1].item())
        hits[0] += key in cache
        cache[key] = True
        o.copy_(i[0])

    vt.measure("copy", run, "cpu", seed=3, shapes=SHAPES["copy"], samples=4)
    assert hits[0] == 0


def test_softmax_in_half_precision_fails_the_float32_tolerance():
    cheat = lambda i, o: o.copy_(torch.softmax(i[0].half().float(), -1))  # noqa: E731
    with pytest.raises(vt.WrongResult, match="wrong result"):
        vt.measure("softmax", cheat, "cpu", seed=5, shapes=SHAPES["softmax"], samples=2)


def test_no_two_consecutive_calls_see_the_same_buffers():
    pointers = []
    vt.measure("copy", lambda i, o: (pointers.append((i[0].data_ptr(), o.data_ptr())), o.copy_(i[0])), "cpu",
               seed=1, shapes=[(1001,)], samples=6)
    assert all(a != b for a, b in zip(pointers, pointers[1:])), "consecutive calls shared a buffer"


def test_a_time_faster_than_the_device_is_refused():
    fast = vt.ShapeTiming((1 << 26,), ours_ms=0.01, torch_ms=0.1, bytes=2 * 4 << 26, flops=None)  # 53 TB/s
    with pytest.raises(vt.ImpossibleTiming, match="above what this GPU can do"):
        vt.referee("copy", fast, 4200.0, "cuda")
    plausible = vt.ShapeTiming((1 << 26,), ours_ms=0.14, torch_ms=0.14, bytes=2 * 4 << 26, flops=None)
    vt.referee("copy", plausible, 4200.0, "cuda")
    matmul = vt.ShapeTiming((4096,) * 3, ours_ms=0.01, torch_ms=0.2, bytes=0, flops=2 * 4096 ** 3)
    with pytest.raises(vt.ImpossibleTiming, match="TFLOP/s"):
        vt.referee("matmul", matmul, 700.0, "cuda")


def test_the_timed_shapes_include_an_odd_one_drawn_from_the_seed():
    a, b = vt.timed_shapes("softmax", 1), vt.timed_shapes("softmax", 2)
    assert a[0] == b[0] == (8192, 8192)
    assert a[1] != b[1] and all(d % 2 for d in a[1]), (a, b)


def test_a_call_counts_the_slower_of_its_two_clocks():
    """The stream's events floor an honest call (an overestimated sync cost cannot flatter it);
    the device-wide interval catches work on another stream (the timed stream saw none)."""
    honest = vt.CallTime(stream_ms=0.180, device_ms=0.186)
    assert vt._net(honest, sync_ms=0.012) == pytest.approx(0.180)
    side_stream = vt.CallTime(stream_ms=0.002, device_ms=0.190)
    assert vt._net(side_stream, sync_ms=0.010) == pytest.approx(0.180)


def test_torch_peer_runs_at_the_precision_the_check_demands():
    """cuBLAS's 16-bit reductions and tf32 are off while timing (torch's own f16 matmul at K ~ 2800
    failed the check with them on, on an H100), and torch's defaults come back afterwards."""
    flags = torch.backends.cuda.matmul
    before = (flags.allow_fp16_reduced_precision_reduction, flags.allow_tf32)
    seen = []

    def run(i, o):
        seen.append((flags.allow_fp16_reduced_precision_reduction, flags.allow_bf16_reduced_precision_reduction,
                     flags.allow_tf32))
        o.copy_(i[0].double() @ i[1].double())

    vt.measure("matmul", run, "cpu", seed=3, shapes=SHAPES["matmul"], samples=2)
    assert seen and not any(any(s) for s in seen)
    assert (flags.allow_fp16_reduced_precision_reduction, flags.allow_tf32) == before
