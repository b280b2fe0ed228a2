"""torch's other implementations as peers of a benchmark row (tests/bench/<op>.py's torch_peers: attention's
flash and cuDNN backends, forced one at a time): each is timed in the same run, the fastest of eager,
torch.compile and the peers is the ratio's denominator, and a backend that refuses the call is a note,
not a failed row."""

from __future__ import annotations

import torch

import bench.scaled_dot_product_attention as attention_bench
from bench import sweep
from bench.sweep import Limits, draw_cases
from operator_runtime_testing.performance import PerformanceResult

TINY = Limits(max_elements=4096, min_bytes=1024, max_dim=48, max_flops=2**18)


def _row(**kw) -> PerformanceResult:
    return PerformanceResult(op="scaled_dot_product_attention", backend="nvidia", shape=[1], dtype="bf16", attrs={},
                             latency_ms=2.0, latency_p10_ms=2.0, latency_p90_ms=2.0, bytes=1, flops=1, **kw)


def test_the_fastest_peer_is_the_ratios_denominator():
    row = _row(torch_ms=4.0, torch_compile_ms=3.0, torch_peers_ms={"flash": 2.5, "cudnn": 1.0})
    assert row.best_torch_ms == 1.0 and row.speedup == 0.5
    assert _row(torch_ms=4.0, torch_compile_ms=3.0).best_torch_ms == 3.0  # no peers: eager or compile
    assert row.to_json()["torch_peers_ms"] == {"flash": 2.5, "cudnn": 1.0}


def test_the_attention_peers_are_cuda_only():
    q = torch.randn(1, 1, 4, 8)
    assert attention_bench.torch_peers(torch.empty_like(q), [q, q, q], {}) == {}


def test_a_peer_is_timed_and_a_refusing_peer_noted(monkeypatch):
    calls = []

    def peers(out, inputs, attrs):
        def refuses():
            raise RuntimeError("No available kernel. Aborting execution.\nmore")
        return {"fast": lambda: calls.append(1), "refuses": refuses}
    monkeypatch.setattr(attention_bench, "torch_peers", peers)
    case = draw_cases("scaled_dot_product_attention", 1, 1, TINY)[0]
    (row,), _ = sweep.measure_case(case, ["cpu"], "cpu", torch_compile=False, ceiling=None,
                                   gen=torch.Generator().manual_seed(0))
    assert calls and set(row.torch_peers_ms) == {"fast"} and row.torch_peers_ms["fast"] > 0
    assert row.best_torch_ms == min(row.torch_ms, row.torch_peers_ms["fast"])
    assert any(n.startswith("torch refuses refused: No available kernel") for n in row.notes)


def test_a_causal_call_counts_the_pairs_it_scores():
    """The FLOPs behind a TFLOP/s figure: a causal call scores sum over i of min(i + 1, Sk) pairs (torch's
    top-left mask), about half of Sq Sk. Counted at the full Sq Sk, torch's causal cuDNN prefill read
    1146 TFLOP/s on an H100 (dense bf16 peak 989), and a student's causal kernel in lab 6, timed by the
    grader's referee, could have been rejected as impossible."""
    from operator_runtime_testing.operators import get
    from operator_runtime_testing.operators.scaled_dot_product_attention import visible_pairs

    record = get("scaled_dot_product_attention")
    q, k = torch.empty(2, 3, 7, 16, device="meta"), torch.empty(2, 3, 5, 16, device="meta")
    assert visible_pairs(7, 5, True) == sum(min(i + 1, 5) for i in range(7)) == 25
    assert record.call_flops([q, k, k]) == 4 * 6 * 7 * 5 * 16
    assert record.call_flops([q, k, k], {"is_causal": True}) == 4 * 6 * 25 * 16
    assert record.flops((1, 2, 4096, 64)) == 4 * 2 * (4096 * 4097 // 2) * 64  # the lab's call is causal
