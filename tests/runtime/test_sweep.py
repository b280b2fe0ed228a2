"""The shape sweep (tests/bench/sweep.py, tests/run_ops.py --mode sweep), on the CPU: the drawing is
a function of the seed, every category stays within the bounds issue 29 gives it, and a quick sweep
on tiny caps writes rows with what the chart and the summary read, every result checked."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench import sweep
from bench.sweep import Limits, categories, draw_cases
from operator_runtime_testing.operators import OPERATORS

ROOT = Path(__file__).resolve().parents[2]
OPS = tuple(OPERATORS)
TINY = Limits(max_elements=4096, min_bytes=1024, max_dim=48, max_flops=2**18)
LIMITS = {"default": Limits(), "tiny": TINY, "quick": Limits(max_elements=1 << 24, max_flops=1 << 36),
          "dim16": Limits(max_dim=16, max_flops=2**14)}
# what each set of limits leaves no room for: vocabulary rows under 4096 elements, no multiple of 8 in 24..16
EMPTY = {"tiny": {"reduce_sum": ["vocab"], "softmax": ["vocab"]}, "dim16": {"matmul": ["non-pow2-kn"]}}


def shapes(cases) -> list[tuple]:
    return [(c.category, tuple(s.shape for s in c.inputs), c.dtype, tuple(c.attrs.items())) for c in cases]


# -- drawing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_the_drawing_is_a_function_of_the_seed(op):
    assert shapes(draw_cases(op, 11, 4)) == shapes(draw_cases(op, 11, 4))
    assert shapes(draw_cases(op, 11, 4)) != shapes(draw_cases(op, 12, 4))


@pytest.mark.parametrize("op", OPS)
def test_a_fresh_seed_moves_every_category(op):
    """Every category's shapes change with the seed (vocabulary rows keep their widths but not their counts)."""
    for cat in categories(op):
        drawn = {tuple(shapes(draw_cases(op, seed, 2, only={cat.name}))) for seed in range(6)}
        assert len(drawn) > 1, f"{op} {cat.name}: the same shapes for every seed"


def test_a_category_draws_the_same_shapes_whatever_else_is_drawn():
    """Each category has its own stream: picking categories (--category) moves no shape of another."""
    alone = draw_cases("softmax", 5, 3, only={"dim0"})
    assert shapes(alone) == [s for s in shapes(draw_cases("softmax", 5, 3)) if s[0] == "dim0"]


def test_dtypes_rotate_within_each_category():
    for op in OPS:
        for cat in categories(op):
            dtypes = {c.dtype for c in draw_cases(op, 3, 3, only={cat.name})}
            assert dtypes == {torch.float32, torch.float16, torch.bfloat16}, (op, cat.name, dtypes)


def _size(dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def violations(case, lim: Limits) -> list[str]:
    """What of issue 29's bounds a drawn case breaks, written from the issue, not from the drawing code."""
    bad = []
    need = lambda ok, what: None if ok else bad.append(what)  # noqa: E731
    specs = case.inputs
    cat, dim = case.category, case.attrs.get("dim", -1)
    floor = min(math.ceil(lim.min_bytes / _size(case.dtype)), lim.max_elements // 2)
    if case.op == "matmul":
        (m, k), (k2, n) = specs[0].shape, specs[1].shape
        need(k == k2, "a's K is b's")
        need(all(1 <= x <= lim.max_dim for x in (m, n, k)), f"M, N, K within 1..{lim.max_dim}")
        need(2 * m * n * k <= lim.max_flops, "FLOPs under the cap")
        need(case.size == m * n * k, "size is M*N*K")
        need(specs[0].layout == "contiguous", "a contiguous")
        need(specs[1].layout == ("transposed" if cat == "b-transposed" else "contiguous"), "b's layout")
        need(cat != "decode" or (m <= 64 and min(n, k) >= min(256, lim.max_dim)), "decode: M <= 64, N, K >= 256")
        need(cat != "large" or min(m, n, k) >= min(1024, lim.max_dim), "large: M, N, K >= 1024")
        need(cat != "small" or max(m, n, k) <= 256, "small: M, N, K <= 256")
        need(cat != "odd-kn" or (n % 2 and k % 2), "odd-kn: N and K odd")
        need(cat != "non-pow2-kn" or all(x % 8 == 0 and x & (x - 1) for x in (n, k)),
             "non-pow2-kn: N, K multiples of 8, not powers of two")
        return bad
    if OPERATORS[case.op].kind == "attention":  # query (B, H, Sq, D), key and value (B, Hkv, Sk, D)
        (b, h, sq, d), (b2, hkv, sk, d2), (b3, hkv3, sk3, dv) = (s.shape for s in specs)
        need((b, hkv, sk, d) == (b2, hkv, sk, d2) == (b3, hkv3, sk3, dv), "key and value fit query")
        need(min(b, h, hkv, sq, sk, d) >= 1, "no empty dim")
        need(h % hkv == 0 and (h != hkv) == bool(case.attrs.get("enable_gqa")), "enable_gqa where heads are grouped")
        need(4 * b * h * sq * sk * d <= lim.max_flops, "FLOPs under the cap")
        cap = min(lim.small_elements, lim.max_elements) if cat == "small" else lim.max_elements
        need(max(math.prod(s.shape) for s in specs) <= cap, "elements under the cap")
        need(case.size == b * h * sq * sk * d, "size is B*H*Sq*Sk*D")
        need(all(s.layout == "contiguous" for s in specs), "contiguous")
        need(bool(case.attrs.get("is_causal")) == (cat == "causal"), "causal in its category")
        need(cat not in ("prefill", "causal") or (sq == sk and d <= 128), "prefill: Sq = Sk, D <= 128")
        need(cat != "decode" or (sq <= 16 and sk >= sq), "decode: Sq <= 16 against Sk >= Sq")
        need(cat != "gqa" or h > hkv, "gqa: heads grouped")
        need(cat != "odd-head-dim" or (d not in (64, 128) and sk >= sq), "odd-head-dim: not 64 or 128, Sk >= Sq")
        return bad
    first = specs[0].shape
    total = math.prod(first)
    need(total <= lim.max_elements, "elements under the cap")
    if cat == "small":
        need(total <= lim.small_elements, "small: at most 2^16 elements")
    else:
        need(total >= floor, f"at least {lim.min_bytes} bytes")
    if case.op in ("reduce_sum", "softmax"):
        reduced = first[dim]
        need(case.size == reduced, "size is the reduced length")
        need(1 <= reduced <= min(lim.max_row, lim.max_elements), "row length within 1..2^22")
        need(dim == {"dim0": 0, "dim1-of-3d": 1}.get(cat, -1), "the category's dim")
        need(len(first) == (3 if cat == "dim1-of-3d" else 2), "2-d (3-d for the middle dim)")
        need(specs[0].layout == (cat if cat in ("transposed", "offset") else "contiguous"), "the category's view")
        need(cat != "vocab" or reduced in sweep.VOCAB_SIZES, "vocab: a vocabulary's width")
        need(cat != "odd-width" or (reduced % 2 == 1 and 3 <= reduced <= 1 << 16), "odd-width: odd, 3..2^16")
        need(cat != "short-rows" or reduced <= 256, "short-rows: at most 256")
        need(cat != "few-rows" or first[0] <= 16, "few-rows: at most 16 rows")
        need(cat != "dim1-of-3d" or reduced <= 1 << 16, "middle dim at most 2^16")
        return bad
    need(case.size == total, "size is the output's elements")
    need(len(specs) == (2 if case.op == "vector_add" else 1), "one tensor per input")
    broadcast = {"row-vector": (1, first[-1]), "column-vector": (first[0], 1), "scalar-like": (1, 1)}
    if cat in broadcast:
        need(len(first) == 2 and specs[1].shape == broadcast[cat], f"{cat}: b of {broadcast[cat]}")
        return bad
    need(all(s.shape == first for s in specs), "inputs of one shape")
    need(len(first) == (2 if cat == "transposed" else 1), "1-d (2-d transposed)")
    need(cat != "odd" or total % 2 == 1, "odd: an odd length")
    layouts = [s.layout for s in specs]
    want = {"transposed": ["transposed"] + ["contiguous"] * (len(specs) - 1), "offset": ["offset"] * len(specs)}
    need(layouts == want.get(cat, ["contiguous"] * len(specs)), "the category's views")
    return bad


@pytest.mark.parametrize("limits", LIMITS, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_every_category_draws_within_its_bounds(op, limits):
    lim = LIMITS[limits]
    drawn = {cat.name: 0 for cat in categories(op)}
    for seed in range(40):
        for case in draw_cases(op, seed, 4, lim):
            drawn[case.category] += 1
            assert not violations(case, lim), (case.label, case.category, violations(case, lim))
    empty = [name for name, n in drawn.items() if not n]
    assert empty == EMPTY.get(limits, {}).get(op, []), empty


def test_log_uniform_reaches_both_ends():
    """Row lengths from 1 to 2^22: over many draws the 'rows' category covers every few octaves."""
    lengths = [c.size for seed in range(200) for c in draw_cases("softmax", seed, 4, only={"rows"})]
    assert min(lengths) < 8 and max(lengths) > 1 << 20
    octaves = {int(math.log2(n)) // 4 for n in lengths}
    assert octaves == set(range(6)), octaves


def test_limits_clamp_on_the_cpu_and_when_quick():
    cpu = sweep.limits_for("cpu", quick=False, full=False)
    assert cpu.max_elements == 1 << 24 and cpu.max_flops == 1 << 32
    assert sweep.limits_for("cpu", quick=False, full=True) == Limits()
    assert sweep.limits_for("cuda", quick=True, full=False).max_elements == 1 << 24
    assert sweep.limits_for("cuda", quick=False, full=False, max_dim=4096, max_elements=None).max_dim == 4096


# -- a wrong result -----------------------------------------------------------------------------

def test_a_wrong_result_is_reported_and_not_ranked():
    x = torch.randn(9, 33, dtype=torch.float16)
    expected, extra = sweep.reference("softmax", [x], {"dim": -1})
    right = torch.softmax(x.float(), -1).half()
    assert sweep.check("softmax", right, expected, extra) is None
    wrong = right.clone()
    wrong[4, 7] += 0.01
    assert "out of tolerance" in sweep.check("softmax", wrong, expected, extra)
    rows = [{"op": "softmax", "backend": "cpu", "speedup": s, "correct": ok, "case": f"c{i}", "category": "rows",
             "label": "9x33", "dtype": "f16", "layout": "contiguous", "error": None if ok else "out of tolerance"}
            for i, (s, ok) in enumerate([(2.0, True), (0.5, True), (100.0, False)])]
    (s,) = sweep.summarize(rows, [])
    assert (s["rows"], s["wrong"], s["below"], s["median"], s["worst"]) == (3, 1, 1, 1.25, 0.5)
    assert "1 wrong results (not ranked)" in "\n".join(sweep.summary_lines([s], rows))


class WrongKernel:
    """A prepared softmax that runs fast and is 1% off."""

    def __init__(self, out, x, dim, backend=None):
        self.out, self.x, self.dim = out, x, dim

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self):
        self.out.copy_(torch.softmax(self.x.float(), self.dim) * 1.01)


def _one_case(op="softmax"):
    return draw_cases(op, 1, 1, TINY, only={"rows"})[0]


def test_a_wrong_kernel_is_caught_by_the_check(monkeypatch):
    import operator_runtime as ort

    monkeypatch.setattr(ort, "softmax", lambda x, dim, backend=None: torch.softmax(x, dim))
    monkeypatch.setattr(ort, "prepare_softmax", WrongKernel)
    rows, refused = sweep.measure_case(_one_case(), ["cpu"], "cpu", torch_compile=False, ceiling=None,
                                       gen=torch.Generator().manual_seed(0))
    assert not refused and len(rows) == 1
    (row,) = rows
    assert row.correct is False and "out of tolerance" in row.error and row.to_json()["ranked"] is False


def test_a_failing_torch_compile_is_recorded_with_its_reason(monkeypatch):
    def broken(fn, **kwargs):
        def call(*args, **kw):
            raise RuntimeError("inductor says no")
        return call
    monkeypatch.setattr(torch, "compile", broken)
    monkeypatch.setattr(torch._dynamo, "reset", lambda: None)
    (row,), _ = sweep.measure_case(_one_case(), ["cpu"], "cpu", torch_compile=True, ceiling=None,
                                   gen=torch.Generator().manual_seed(0))
    assert row.torch_compile_ms is None and row.torch_compile_error == "torch.compile failed: RuntimeError"
    assert row.correct and row.speedup == row.torch_ms / row.latency_ms  # eager is the peer
    assert "[torch.compile failed: RuntimeError]" in sweep.row_line(row.to_json())


@pytest.mark.parametrize("raised, failed, fatal", [
    (lambda: __import__("operator_runtime").UnsupportedError("tilelang: K and N must be multiples of 8"), False, False),
    (lambda: RuntimeError("boom"), True, False),
    (lambda: RuntimeError("CUDA error: an illegal memory access was encountered"), True, True),
])
def test_a_refusal_or_a_crash_is_listed_not_timed(monkeypatch, raised, failed, fatal):
    import operator_runtime as ort

    def call(*args, **kwargs):
        raise raised()
    monkeypatch.setattr(ort, "softmax", call)
    rows, refused = sweep.measure_case(_one_case(), ["cpu", "tilelang"], "cpu", torch_compile=False, ceiling=None,
                                       gen=torch.Generator().manual_seed(0))
    assert rows == [] and refused[0]["failed"] is failed and bool(refused[0].get("fatal")) is fatal
    assert len(refused) == (1 if fatal else 2)  # a sticky CUDA error stops the case (and the sweep)


# -- a quick sweep on the CPU -------------------------------------------------------------------

SWEEP = [sys.executable, "tests/run_ops.py", "--mode", "sweep", "--op", "all", "--backend", "cpu", "--seed", "3",
         "--quick", "--max-elements", "2^12", "--min-bytes", "1K", "--max-dim", "48", "--max-flops", "2^18"]
FIELDS = ("category", "shape", "input_shapes", "dtype", "layout", "attrs", "latency_ms", "torch_ms", "torch_compile_ms",
          "torch_compile_error", "speedup", "ratio", "gbps", "ceiling_fraction", "tflops", "size", "size_measure",
          "correct", "error", "ranked", "case", "label")


@pytest.fixture(scope="module")
def quick_sweep(tmp_path_factory):
    path = tmp_path_factory.mktemp("sweep") / "sweep.json"
    run = subprocess.run(SWEEP + ["--json", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=240)
    return run, path


def test_a_quick_cpu_sweep_writes_checked_rows(quick_sweep):
    run, path = quick_sweep
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    doc = json.loads(path.read_text())
    assert doc["device"]["type"] == "cpu" and doc["versions"]["torch"] and doc["copy_ceiling_gbps"] > 0
    assert doc["sweep"]["seed"] == 3 and doc["sweep"]["limits"]["max_elements"] == 4096
    rows = doc["rows"]
    drawn = {(op, c.name) for op in OPS for c in categories(op)} - {("reduce_sum", "vocab"), ("softmax", "vocab")}
    assert {(r["op"], r["category"]) for r in rows} == drawn  # one row per category (--quick), one backend
    for r in rows:
        missing = [k for k in FIELDS if k not in r]
        assert not missing, (missing, r)
        assert r["correct"] is True and r["error"] is None, r
        assert r["latency_ms"] > 0 and r["torch_ms"] > 0 and r["speedup"] > 0
        assert r["torch_compile_ms"] is None  # off on the CPU unless --torch-compile
        assert (r["tflops"] if r["op"] == "matmul" else r["gbps"]) > 0
    assert [s["op"] for s in doc["summary"]] == list(OPS) and all(s["median"] > 0 for s in doc["summary"])
    out = run.stdout
    assert "backend  op         category" in out and "summary: ratio" in out
    assert sum(line.startswith("cpu ") and line.rstrip().endswith("ok") for line in out.splitlines()) == len(rows)


def test_resume_measures_nothing_twice(quick_sweep):
    run, path = quick_sweep
    before = json.loads(path.read_text())["rows"]
    unseeded = [a for i, a in enumerate(SWEEP) if "--seed" not in SWEEP[i - 1:i + 1]]  # the file's seed
    again = subprocess.run(unseeded + ["--json", str(path), "--resume"], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0, again.stderr[-3000:]
    doc = json.loads(path.read_text())
    assert doc["rows"] == before and len(doc["resumed"]) == 1
    other = subprocess.run(SWEEP + ["--seed", "4", "--json", str(path), "--resume"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert other.returncode != 0 and "--resume" in other.stderr + other.stdout


def test_the_charts_draw_from_the_sweep(quick_sweep, tmp_path):
    from operator_course.book.sweep_chart import main

    _, path = quick_sweep
    assert main([str(path), "-o", str(tmp_path), "--format", "png"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"sweep-{op}.png" for op in OPS)
