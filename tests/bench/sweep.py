"""The shape sweep (issue 29): each operator over the shapes users bring, drawn by category from a seed.

    python tests/run_ops.py --mode sweep --op all --backend nvidia,tilelang --seed 1 --json OUT.json
    python tests/run_ops.py --mode sweep --op softmax --backend cpu --quick --seed 1

Instead of a table of hand-picked shapes, every category below (row lengths log-uniform, LLM
vocabulary rows, odd widths, sums over dim 0, broadcasts, decode matmuls, ...) draws
--per-category shapes from its own random stream (seed, op, category): sizes are log-uniform, so a
fresh seed lands between the points of any grid, and adding a category moves no other's shapes.
Dtypes rotate through f32, f16 and bf16 within a category.

Each shape is timed as --mode bench times it (bench.harness: a prepared descriptor's run(), torch
eager and torch.compile on the same tensors in the same run, one copy ceiling), and its result,
from the timed runs, is checked against the float64 reference within the course's tolerances
(the operator record's reference and extra atol, operator_runtime_testing.assertions): a wrong
result is reported and never ranked. torch.compile is compiled afresh for every shape
(dynamo reset, dynamic=False), as a user with that one shape gets it. A backend that refuses a
shape (ort.UnsupportedError) is listed under "refused" in the JSON, not timed.

The JSON is --mode bench's (performance.write_results: device, clocks, versions, copy ceiling,
one row per measurement, rewritten after every shape so a run stopped by a time limit keeps what
it measured) with, per row, the category, layout, every input's shape, the chart's size measure
and the check; and "sweep" (seed, limits), "refused" and "summary". --resume continues a file
written with the same seed and limits (the device allows 10 minutes a command).
"""

from __future__ import annotations

import json
import math
import random
import statistics
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

import torch

import operator_runtime as ort
from bench.harness import CPU_MAX_ELEMENTS, DTYPE_NAMES, _bench_module, _measure
from cases import load
from operator_runtime_testing.assertions import assert_matches_torch
from operator_runtime_testing.operators import get
from operator_runtime_testing.performance import PerformanceResult, read_results, write_results
from operator_runtime_testing.tensors import TensorSpec as T
from operator_runtime_testing.tensors import make_tensor

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
VOCAB_SIZES = (32000, 50257, 128256)  # Llama 2, GPT-2, Llama 3 vocabularies: softmax / sums over logits
BELOW = 0.95                           # issue 29's floor for every memory-bound row


@dataclass(frozen=True)
class Limits:
    """What a drawn shape may be: the caps keep a run's time and memory bounded, min_bytes keeps the
    timed kernels long enough to measure (except the 'small' categories, where launch cost is the point)."""
    max_elements: int = 1 << 28    # elements of the largest input (1 GiB of f32)
    min_bytes: int = 4 << 20       # bytes of the first input, outside the small categories
    max_row: int = 1 << 22         # longest row (the reduced / normalised dim)
    small_elements: int = 1 << 16  # the small categories' largest tensor
    max_dim: int = 16384           # matmul's M, N and K
    max_flops: int = 1 << 40       # matmul's 2 M N K (1.1 TFLOP), attention's 4 B H Sq Sk D

    @property
    def half(self) -> int:
        """The longest row a category draws: at most half the element cap, so a row count
        always fits between the byte floor and the element cap."""
        return max(1, min(self.max_row, self.max_elements // 2))

    def min_elements(self, dtype: torch.dtype) -> int:
        """The byte floor in elements of dtype (never above half the cap)."""
        size = torch.empty((), dtype=dtype).element_size()
        return max(1, min(-(-self.min_bytes // size), self.max_elements // 2))


QUICK = {"max_elements": 1 << 24, "max_flops": 1 << 36}  # --quick (CI): one shape a category, under these
CPU = {"max_elements": CPU_MAX_ELEMENTS, "max_flops": 1 << 32}  # on the CPU, unless --full (as --mode bench)


@dataclass(frozen=True)
class SweepCase:
    op: str
    category: str
    index: int                    # the draw's number within its category (the key --resume skips by)
    inputs: tuple[T, ...]         # the tensors, as operator_runtime_testing.tensors draws them
    dtype: torch.dtype
    attrs: dict
    layout: str                   # contiguous, transposed (x.t()), offset (one element past the storage's start), ...
    size: int                     # the chart's x: row length, elements, or M*N*K

    @property
    def key(self) -> str:
        return f"{self.op}/{self.category}/{self.index}"

    @property
    def shapes(self) -> list[list[int]]:
        return [list(s.shape) for s in self.inputs]

    @property
    def label(self) -> str:
        if get(self.op).kind == "matmul":
            (m, k), (_, n) = (s.shape for s in self.inputs)
            text = f"{m}x{n}x{k}"
        elif get(self.op).kind == "attention":  # (B, H, Sq, Sk, D), Hkv after a slash where it differs
            (b, h, sq, d), (_, hkv, sk, _), _ = (s.shape for s in self.inputs)
            text = f"{b}x{h}{f'/{hkv}' if hkv != h else ''}x{sq}x{sk}x{d}"
        else:
            shapes = ["x".join(map(str, s)) for s in self.shapes]
            text = " + ".join(shapes) if len(set(shapes)) > 1 else shapes[0]
        dim = self.attrs.get("dim", -1)
        return text + ("" if dim == -1 else f" d{dim}")


SIZE_MEASURE = {"rows": "row length", "elementwise": "elements", "matmul": "M*N*K", "attention": "B*H*Sq*Sk*D"}


# -- drawing --------------------------------------------------------------------------------------

def log_int(rng: random.Random, lo: int, hi: int) -> int:
    """An integer in [lo, hi], log-uniform (each power of two about as likely as the next)."""
    lo, hi = max(1, lo), max(1, hi)
    if hi <= lo:
        return lo
    return min(hi, max(lo, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1))))))


def count(rng: random.Random, per: int, dtype: torch.dtype, lim: Limits) -> int:
    """How many rows (or columns, or leading blocks) of ``per`` elements: log-uniform between the byte
    floor and the element cap, so from one row to millions."""
    lo = -(-lim.min_elements(dtype) // per)
    return log_int(rng, lo, max(lo, lim.max_elements // per))


def _odd(n: int, lo: int, hi: int) -> int:
    n |= 1
    return n - 2 if n > hi and n - 2 >= lo else n


@dataclass(frozen=True)
class Category:
    name: str
    about: str
    # (rng, dtype, limits, input count) -> (input specs, attrs, layout, size), or None when the
    # limits leave this category nothing to draw (e.g. vocabulary rows under a tiny cap)
    draw: Callable[[random.Random, torch.dtype, Limits, int], tuple | None]
    inputs: tuple[int, ...] = (1, 2)  # the ops it applies to, by their input count (broadcasts: 2)


def _rows(layout: str, lo_len: int = 1, hi_len: int | None = None, odd: bool = False):
    def draw(rng, dtype, lim, _):
        hi = min(hi_len or lim.max_row, lim.half)
        if hi < lo_len:
            return None
        n = log_int(rng, lo_len, hi)
        n = _odd(n, lo_len, hi) if odd else n
        return (T((count(rng, n, dtype, lim), n), layout=layout),), {"dim": -1}, layout, n
    return draw


def _vocab(rng, dtype, lim, _):
    sizes = [v for v in VOCAB_SIZES if v <= lim.half]
    if not sizes:
        return None
    n = rng.choice(sizes)
    return (T((count(rng, n, dtype, lim), n)),), {"dim": -1}, "contiguous", n


def _few_rows(rng, dtype, lim, _):
    rows = min(log_int(rng, 1, 16), lim.max_elements)
    hi = min(lim.max_row, lim.max_elements // rows)
    n = log_int(rng, min(-(-lim.min_elements(dtype) // rows), hi), hi)
    return (T((rows, n)),), {"dim": -1}, "contiguous", n


def _leading(rng, dtype, lim, _):
    n = log_int(rng, 1, lim.half)  # the reduced length, down the columns
    return (T((n, count(rng, n, dtype, lim))),), {"dim": 0}, "contiguous", n


def _middle(rng, dtype, lim, _):
    n = log_int(rng, 1, min(1 << 16, lim.half))
    inner = log_int(rng, 1, max(1, min(1 << 12, lim.half // n)))
    return (T((count(rng, n * inner, dtype, lim), n, inner)),), {"dim": 1}, "contiguous", n


def _small_rows(rng, dtype, lim, _):
    cap = min(lim.small_elements, lim.max_elements)
    n = log_int(rng, 1, min(4096, cap))
    return (T((log_int(rng, 1, max(1, cap // n)), n)),), {"dim": -1}, "contiguous", n


ROW_CATEGORIES = (
    Category("rows", "row lengths log-uniform 1..2^22, rows to the cap", _rows("contiguous")),
    Category("vocab", "rows of LLM vocabulary size (32000, 50257, 128256)", _vocab),
    Category("odd-width", "odd row lengths 3..2^16", _rows("contiguous", 3, 1 << 16, odd=True)),
    Category("short-rows", "rows of 1..256, up to millions of them", _rows("contiguous", 1, 256)),
    Category("few-rows", "1..16 long rows", _few_rows),
    Category("dim0", "over the leading dim of a 2-d tensor (down columns)", _leading),
    Category("dim1-of-3d", "over the middle dim of a 3-d tensor", _middle),
    Category("transposed", "rows of x.t() (strided rows)", _rows("transposed")),
    Category("offset", "rows from one element past the storage's start (unaligned)", _rows("offset")),
    Category("small", "at most 2^16 elements: launch cost dominates", _small_rows),
)


def _flat(layout: str, odd: bool = False):
    def draw(rng, dtype, lim, inputs):
        lo, hi = lim.min_elements(dtype), lim.max_elements
        n = log_int(rng, lo, hi)
        n = _odd(n, lo, hi) if odd else n
        return (T((n,), layout=layout),) * inputs, {}, layout, n
    return draw


def _transposed_2d(rng, dtype, lim, inputs):
    n = log_int(rng, 1, min(1 << 16, lim.half))
    shape = (count(rng, n, dtype, lim), n)
    return (T(shape, layout="transposed"),) + (T(shape),) * (inputs - 1), {}, "transposed", shape[0] * n


def _broadcast(layout: str):
    def draw(rng, dtype, lim, _):
        n = log_int(rng, 1, min(1 << 16, lim.half))
        m = count(rng, n, dtype, lim)
        b = {"row-vector": (1, n), "column-vector": (m, 1), "scalar-like": (1, 1)}[layout]
        return (T((m, n)), T(b)), {}, layout, m * n
    return draw


def _small_flat(rng, dtype, lim, inputs):
    n = log_int(rng, 1, min(lim.small_elements, lim.max_elements))
    return (T((n,)),) * inputs, {}, "contiguous", n


ELEMENTWISE_CATEGORIES = (
    Category("flat", "1-d, elements log-uniform from the byte floor to the cap", _flat("contiguous")),
    Category("odd", "1-d, an odd number of elements", _flat("contiguous", odd=True)),
    Category("transposed", "2-d, the first input x.t()", _transposed_2d),
    Category("offset", "1-d, every input one element past its storage's start", _flat("offset")),
    Category("small", "at most 2^16 elements: launch cost dominates", _small_flat),
    Category("row-vector", "b of (1, N) over a of (M, N): a bias", _broadcast("row-vector"), inputs=(2,)),
    Category("column-vector", "b of (M, 1) over a of (M, N)", _broadcast("column-vector"), inputs=(2,)),
    Category("scalar-like", "b of (1, 1) over a of (M, N)", _broadcast("scalar-like"), inputs=(2,)),
)


def _is_pow2(n: int) -> bool:
    return n & (n - 1) == 0


def _not_pow2_multiple_of_8(n: int, hi: int) -> int | None:
    """n rounded down to a multiple of 8 that is not a power of two (TileLang's GPU matmul needs K, N % 8 == 0);
    None where hi leaves none (below 24)."""
    if hi < 24:
        return None
    n = max(8, n // 8 * 8)
    if _is_pow2(n):
        n = 24 if n == 8 else n + 8 if n + 8 <= hi else n - 8
    return n


def _matmul(m=(1, None), nk=(1, None), adjust=None, layout="contiguous"):
    def draw(rng, dtype, lim, _):
        d = lim.max_dim
        lo_m, hi_m = min(m[0], d), min(m[1] or d, d)
        lo, hi = min(nk[0], d), min(nk[1] or d, d)
        fix = adjust or (lambda x, lo, hi: x)
        mnk = None
        for _ in range(50):  # log-uniform in each, refused past the FLOP cap
            mm, n, k = log_int(rng, lo_m, hi_m), fix(log_int(rng, lo, hi), lo, hi), fix(log_int(rng, lo, hi), lo, hi)
            if n is None or k is None:
                return None
            if 2 * mm * n * k <= lim.max_flops:
                mnk = mm, n, k
                break
        else:  # the cap takes most of the range (a low cap, a 'large' category): halve the largest dims to fit
            dims = [[mm, lo_m], [n, lo], [k, lo]]
            while 2 * math.prod(x for x, _ in dims) > lim.max_flops:
                big = max((x for x in dims if x[0] > x[1]), key=lambda x: x[0], default=None)
                if big is None:
                    return None
                big[0] = max(big[1], big[0] // 2)
            mm, n, k = dims[0][0], fix(dims[1][0], lo, hi), fix(dims[2][0], lo, hi)
            if 2 * mm * n * k > lim.max_flops:
                return None
            mnk = mm, n, k
        mm, n, k = mnk
        b = T((k, n), layout="transposed") if layout == "b-transposed" else T((k, n))
        return (T((mm, k)), b), {}, layout, mm * n * k
    return draw


MATMUL_CATEGORIES = (
    Category("general", "M, N, K log-uniform 1..16384", _matmul()),
    Category("decode", "M of 1..64 (decode), N and K of 256..16384", _matmul(m=(1, 64), nk=(256, None))),
    Category("large", "M, N, K all 1024..16384", _matmul(m=(1024, None), nk=(1024, None))),
    Category("non-pow2-kn", "N and K multiples of 8 but no power of two (11008, 3000, ...)",
             _matmul(nk=(24, None), adjust=lambda x, lo, hi: _not_pow2_multiple_of_8(x, hi))),
    Category("odd-kn", "N and K odd (rows not 16-byte aligned)",
             _matmul(nk=(3, None), adjust=lambda x, lo, hi: _odd(x, lo, hi))),
    Category("b-transposed", "b a transposed weight (x @ W.t())", _matmul(layout="b-transposed")),
    Category("small", "M, N, K of 1..256: launch cost dominates", _matmul(m=(1, 256), nk=(1, 256))),
)


def _attention(sq=(1, 8192), sk=None, groups=(1,), causal=False, heads=(1, 32), heads_dims=(64, 128),
               small=False):
    """query (B, H, Sq, D), key and value (B, H / group, Sk, D): B, the key heads, Sq and Sk (Sk = Sq when
    ``sk`` is None) log-uniform, D and the group from their choices. Past the FLOP cap (4 B H Sq Sk D) or
    the element cap (of the largest input) the largest of B, key heads, Sq and Sk is halved, then D."""
    def draw(rng, dtype, lim, _):
        cap = min(lim.small_elements, lim.max_elements) if small else lim.max_elements
        group, d = rng.choice(groups), rng.choice(heads_dims)
        b, hkv = log_int(rng, 1, 8), log_int(rng, heads[0], heads[1]) // group or 1
        q_len = log_int(rng, *sq)
        k_len = q_len if sk is None else log_int(rng, max(sk[0], q_len), sk[1])
        # [value, floor]: Sk (where drawn apart from Sq) stays at least the Sq first drawn
        dims = [[b, 1], [hkv, 1], [q_len, 1]] + ([[k_len, q_len]] if sk is not None else [])
        while True:
            b, hkv, q_len = (x for x, _ in dims[:3])
            k_len = dims[3][0] if sk is not None else q_len
            largest = max(b * hkv * group * q_len, b * hkv * k_len) * d
            if 4 * b * hkv * group * q_len * k_len * d <= lim.max_flops and largest <= cap:
                break
            shrink = max((x for x in dims if x[0] > x[1]), key=lambda x: x[0], default=None)
            if shrink is not None:
                shrink[0] = max(shrink[1], shrink[0] // 2)
            elif d > 1:
                d //= 2
            else:
                return None
        q = T((b, hkv * group, q_len, d))
        kv = T((b, hkv, k_len, d))
        attrs = {**({"is_causal": True} if causal else {}), **({"enable_gqa": True} if group > 1 else {})}
        return (q, kv, kv), attrs, "contiguous", b * hkv * group * q_len * k_len * d
    return draw


ATTENTION_CATEGORIES = (
    Category("prefill", "Sq = Sk log-uniform 1..8192, D 64 or 128 (halved under tight caps)", _attention(),
             inputs=(3,)),
    Category("causal", "prefill with is_causal", _attention(causal=True), inputs=(3,)),
    Category("decode", "Sq of 1..16 against Sk of 256..65536 (a KV cache)", _attention((1, 16), (256, 65536)),
             inputs=(3,)),
    Category("gqa", "grouped-query heads (2, 4 or 8 per key head), decode and prefill",
             _attention((1, 4096), (1, 16384), groups=(2, 4, 8), heads=(8, 64)), inputs=(3,)),
    Category("odd-head-dim", "head dims other than 64 and 128 (8..240, halved under tight caps), Sq <= Sk",
             _attention((1, 2048), (1, 4096), heads_dims=(8, 40, 72, 80, 96, 160, 200, 240)), inputs=(3,)),
    Category("small", "at most 2^16 elements a tensor: launch cost dominates",
             _attention((1, 64), (1, 256), heads=(1, 8), heads_dims=(16, 32, 64), small=True), inputs=(3,)),
)

CATEGORIES = {"rows": ROW_CATEGORIES, "elementwise": ELEMENTWISE_CATEGORIES, "matmul": MATMUL_CATEGORIES,
              "attention": ATTENTION_CATEGORIES}


def categories(op: str) -> tuple[Category, ...]:
    record = get(op)
    return tuple(c for c in CATEGORIES[record.kind] if record.inputs in c.inputs)


def draw_cases(op: str, seed: int, per_category: int, limits: Limits = Limits(),
               only: set[str] | None = None) -> list[SweepCase]:
    """The op's shapes for this seed: per category, ``per_category`` draws from the category's own stream."""
    inputs = get(op).inputs
    cases = []
    for cat in categories(op):
        if only and cat.name not in only:
            continue
        rng = random.Random(f"sweep/{seed}/{op}/{cat.name}")
        start = rng.randrange(len(DTYPES))
        seen = set()
        for i in range(per_category):
            dtype = DTYPES[(start + i) % len(DTYPES)]
            drawn = cat.draw(rng, dtype, limits, inputs)
            if drawn is None:
                continue
            specs, attrs, layout, size = drawn
            key = (specs, dtype, tuple(sorted(attrs.items())))
            if key in seen:
                continue
            seen.add(key)
            cases.append(SweepCase(op, cat.name, i, specs, dtype, attrs, layout, size))
    return cases


# -- measuring ------------------------------------------------------------------------------------

@dataclass
class SweepResult(PerformanceResult):
    """A bench row (PerformanceResult: latency, torch eager and torch.compile, bytes, FLOPs, ceiling)
    and what the sweep knows of its shape, and its check against float64."""
    case: str = ""
    label: str = ""             # the table's shape: "MxN + 1xN", "MxN d0", matmul's "MxNxK"
    category: str = ""
    layout: str = ""
    input_shapes: list = field(default_factory=list)
    size: int = 0
    size_measure: str = ""
    correct: bool = True
    error: str | None = None
    torch_compile_error: str | None = None

    def to_json(self) -> dict:
        row = super().to_json()
        row.update(ratio=self.speedup, best_torch_ms=self.best_torch_ms, tflops=self.gflops / 1e3, ranked=self.correct)
        return row


COLUMNS = (f"{'backend':<9}{'op':<11}{'category':<14}{'shape':<24}{'dtype':<6}{'layout':<14}{'ours ms':>10}"
           f"{'eager ms':>10}{'compile':>10}{'ratio':>9}  {'throughput':<20}check")


def _head(backend: str, case: SweepCase) -> str:
    return (f"{backend:<9}{case.op:<11}{case.category:<14}{case.label:<24}{DTYPE_NAMES[case.dtype]:<6}"
            f"{case.layout:<14}")


def row_line(r: dict) -> str:
    """A table line of a JSON row (SweepResult.to_json())."""
    compiled = f"{r['torch_compile_ms']:10.4f}" if r["torch_compile_ms"] else f"{'-':>10}"
    if get(r["op"]).kind in ("matmul", "attention"):
        peak = f" {100 * r['peak_fraction']:.0f}%pk" if r.get("peak_fraction") else ""
        throughput = f"{r['tflops']:.2f} TFLOP/s{peak}"
    else:
        ceil = f" {100 * r['ceiling_fraction']:.0f}%ceil" if r.get("ceiling_fraction") else ""
        throughput = f"{r['gbps']:.0f} GB/s{ceil}"
    check = "ok" if r["correct"] else "WRONG: " + (r["error"] or "").splitlines()[0][:100]
    if r.get("torch_compile_error"):
        check += f"  [{r['torch_compile_error']}]"
    shape = r["label"]
    return (f"{r['backend']:<9}{r['op']:<11}{r['category']:<14}{shape:<24}{r['dtype']:<6}{r['layout']:<14}"
            f"{r['latency_ms']:10.4f}{r['torch_ms']:10.4f}{compiled}{r['speedup']:8.2f}x  {throughput:<20}{check}")


def check(op: str, out: torch.Tensor, expected: torch.Tensor, extra) -> str | None:
    """None when ``out`` matches the float64 reference within the dtype's tolerance, else why not."""
    try:
        assert_matches_torch(out, expected, exact=get(op).exact, extra_atol=extra, what=op)
    except AssertionError as e:
        return str(e)
    return None


def reference(op: str, inputs: list, attrs: dict):
    """The record's float64 answer and extra atol (cases.reference, extra_atol), computed on the
    inputs' device (a GPU does float64 of 2^28 elements or a 16k matmul in a blink), then on the CPU."""
    record = get(op)
    want = record.reference_call(*inputs, **attrs).cpu()
    extra = record.extra_atol_call(*inputs, **attrs) if record.extra_atol_call else 0.0
    return want, extra.cpu() if isinstance(extra, torch.Tensor) else extra


def _refusal(case: SweepCase, backend: str, reason: str, failed: bool = False) -> dict:
    return {"case": case.key, "op": case.op, "backend": backend, "category": case.category, "label": case.label,
            "input_shapes": case.shapes, "dtype": DTYPE_NAMES[case.dtype], "layout": case.layout, "reason": reason,
            "failed": failed}


def measure_case(case: SweepCase, backends: list[str], device: str, *, torch_compile: bool, ceiling: float | None,
                 gen: torch.Generator, skip: set[str] = frozenset()) -> tuple[list[SweepResult], list[dict]]:
    """Time ``case`` on each backend (not in ``skip``) as --mode bench does; (rows, refusals)."""
    op = case.op
    cases_module, bench = load(op), _bench_module(op)
    api, prepare = getattr(ort, cases_module.API), getattr(ort, cases_module.PREPARE)
    record = get(op)
    inputs = [make_tensor(s, case.dtype, device, gen) for s in case.inputs]
    compiled = None
    if torch_compile:  # afresh per shape, static: what a user with this one shape gets
        torch._dynamo.reset()
        compiled = torch.compile(record.torch_call, dynamic=False)
    expected = None
    rows, refused = [], []
    for backend in backends:
        if backend in skip:
            continue
        try:
            out = api(*inputs, **case.attrs, backend=backend)
            base = _measure(op, backend, device, case.attrs, inputs, out, prepare, bench, compiled, ceiling)
        except ort.UnsupportedError as e:  # e.g. TileLang's GPU matmul: K and N multiples of 8
            refused.append(_refusal(case, backend, str(e)))
            continue
        except Exception as e:  # a crash on one shape is reported (exit status 1) and the sweep goes on,
            refused.append(_refusal(case, backend, f"{type(e).__name__}: {e}", failed=True))
            if any(sticky in str(e) for sticky in STICKY):  # unless it leaves the CUDA context unusable
                refused[-1]["fatal"] = True
                break
            continue
        if expected is None:
            expected = reference(op, inputs, case.attrs)
        error = check(op, out, *expected)  # out holds the timed runs' result
        compile_error = next((n for n in base.notes if n.startswith("torch.compile failed")), None)
        rows.append(SweepResult(**vars(base), case=case.key, label=case.label, category=case.category,
                                layout=case.layout, input_shapes=case.shapes, size=case.size,
                                size_measure=SIZE_MEASURE[record.kind], correct=error is None, error=error,
                                torch_compile_error=compile_error))
        del out
    return rows, refused


# CUDA errors after which every later call fails too: the sweep stops (its JSON keeps what it measured)
STICKY = ("CUDA error", "illegal memory access", "illegal address", "illegal instruction", "unspecified launch failure")


# -- the run --------------------------------------------------------------------------------------

def summarize(rows: list[dict], refused: list[dict]) -> list[dict]:
    """Per op and backend: ranked (correct) rows, those below 0.95x the better torch, the median ratio."""
    out = []
    for op, backend in dict.fromkeys((r["op"], r["backend"]) for r in rows + refused):
        mine = [r for r in rows if (r["op"], r["backend"]) == (op, backend)]
        ranked = [r for r in mine if r["correct"]]
        ratios = [r["speedup"] for r in ranked]
        below = sorted((r for r in ranked if r["speedup"] < BELOW), key=lambda r: r["speedup"])
        out.append({"op": op, "backend": backend, "rows": len(mine), "wrong": len(mine) - len(ranked),
                    "refused": sum((r["op"], r["backend"]) == (op, backend) and not r.get("failed") for r in refused),
                    "failed": sum((r["op"], r["backend"]) == (op, backend) and bool(r.get("failed")) for r in refused),
                    "below": len(below), "median": statistics.median(ratios) if ratios else None,
                    "worst": min(ratios) if ratios else None,
                    "below_rows": [{k: r[k] for k in ("case", "category", "label", "dtype", "layout", "speedup")}
                                   for r in below]})
    return out


def summary_lines(summary: list[dict], rows: list[dict]) -> list[str]:
    lines = [f"\nsummary: ratio = the better of torch eager and torch.compile over ours (above 1: faster); "
             f"wrong results are not ranked",
             f"{'op':<11}{'backend':<9}{'rows':>5}{'wrong':>6}{'refused':>8}{'failed':>7}{f'< {BELOW}x':>8}{'median':>8}"
             f"{'worst':>8}"]
    for s in summary:
        med = f"{s['median']:7.2f}x" if s["median"] is not None else f"{'-':>8}"
        worst = f"{s['worst']:7.2f}x" if s["worst"] is not None else f"{'-':>8}"
        lines.append(f"{s['op']:<11}{s['backend']:<9}{s['rows']:>5}{s['wrong']:>6}{s['refused']:>8}{s['failed']:>7}"
                     f"{s['below']:>8}{med}{worst}")
    for s in summary:
        if s["below_rows"]:
            lines.append(f"\n{s['op']} on {s['backend']}: {s['below']} rows below {BELOW}x")
            lines += [f"  {r['speedup']:5.2f}x  {r['category']:<14}{r['label']:<24}{r['dtype']:<6}{r['layout']}"
                      for r in s["below_rows"]]
    wrong = [r for r in rows if not r["correct"]]
    if wrong:
        lines.append(f"\n{len(wrong)} wrong results (not ranked):")
        lines += [f"  {r['backend']:<9}{r['op']:<11}{r['category']:<14}{r['label']:<24}{r['dtype']:<6}"
                  f"{(r['error'] or '').splitlines()[0][:120]}" for r in wrong]
    return lines


class SweepFile:
    """The JSON, rewritten after every shape: write_results' header (device, clocks, versions, ceiling,
    written once), the sweep's parameters, rows, refusals and, at the end, the summary."""

    def __init__(self, path: str | None, device: str, command: list[str], ceiling: float | None, meta: dict,
                 resume: bool = False):
        self.path, self.rows, self.refused = path, [], []
        self.doc = {"sweep": meta}
        if not path:
            return
        if resume and Path(path).exists():
            old = read_results(path)
            if old.get("sweep") != meta:
                raise SystemExit(f"--resume: {path} was drawn with {old.get('sweep')}, not {meta}")
            self.doc, self.rows, self.refused = old, old["rows"], old.get("refused", [])
            self.doc["resumed"] = old.get("resumed", []) + [" ".join(command)]
            return
        write_results(path, [], device, command, ceiling)
        self.doc = {**read_results(path), "sweep": meta}

    def done(self) -> set[tuple[str, str]]:
        return {(r["case"], r["backend"]) for r in self.rows + self.refused}

    def add(self, rows: list[dict], refused: list[dict]) -> None:
        self.rows += rows
        self.refused += refused
        self.write()

    def write(self, summary: list[dict] | None = None) -> None:
        if not self.path:
            return
        self.doc.update(rows=self.rows, refused=self.refused)
        if summary is not None:
            self.doc["summary"] = summary
        Path(self.path).write_text(json.dumps(self.doc, indent=1) + "\n")


def run_sweep(ops: list[str], backends: list[str], device: str, *, seed: int, per_category: int, limits: Limits,
              ceiling: float | None, torch_compile: bool, json_path: str | None, command: list[str],
              only: set[str] | None = None, resume: bool = False, draw_only: bool = False,
              print_fn: Callable[[str], None] = print) -> int:
    """Draw, time and check every op's shapes on every backend; 1 if any result was wrong or a call failed, else 0."""
    known = {c.name for op in ops for c in categories(op)}
    if only and only - known:
        print_fn(f"unknown categories {sorted(only - known)} for {', '.join(ops)}: choose from {sorted(known)}")
        return 2
    drawn = {op: draw_cases(op, seed, per_category, limits, only) for op in ops}
    total = sum(map(len, drawn.values()))
    print_fn(f"sweep: seed {seed}, {per_category} per category, {total} shapes "
             f"({', '.join(f'{op} {len(c)}' for op, c in drawn.items())}), limits {asdict(limits)}")
    if draw_only:
        for cases in drawn.values():
            for c in cases:
                print_fn(f"{c.op:<11}{c.category:<14}{c.label:<24}{DTYPE_NAMES[c.dtype]:<6}{c.layout:<14}"
                         f"{SIZE_MEASURE[get(c.op).kind]} {c.size}")
        return 0
    meta = {"seed": seed, "per_category": per_category, "limits": asdict(limits), "backends": backends,
            "torch_compile": torch_compile}
    out = SweepFile(json_path, device, command, ceiling, meta, resume)
    done = out.done()
    print_fn(COLUMNS)
    for r in out.rows:  # what --resume found
        print_fn(row_line(r))
    gen = torch.Generator()
    todo = [case for op in ops for case in drawn[op]]
    for case in todo:
        skip = {b for b in backends if (case.key, b) in done}
        if len(skip) == len(backends):
            continue
        gen.manual_seed(_stable(seed, case.key))
        rows, refused = measure_case(case, backends, device, torch_compile=torch_compile, ceiling=ceiling,
                                     gen=gen, skip=skip)
        rows = [r.to_json() for r in rows]
        for r in rows:
            print_fn(row_line(r))
        for r in refused:
            print_fn(_head(r["backend"], case) + ("FAILED: " if r["failed"] else "refused: ") + r["reason"])
        out.add(rows, refused)
        if any(r.get("fatal") for r in refused):
            print_fn("stopping: the CUDA context is unusable after this error (--resume goes on past this shape)")
            break
    summary = summarize(out.rows, out.refused)
    for line in summary_lines(summary, out.rows):
        print_fn(line)
    out.write(summary)
    if json_path:
        print_fn(f"wrote {len(out.rows)} rows ({len(out.refused)} refusals) to {json_path}")
    return 1 if any(not r["correct"] for r in out.rows) or any(r.get("failed") for r in out.refused) else 0


def _stable(seed: int, key: str) -> int:
    """A tensor seed per shape that does not depend on which shapes ran before it (--resume, --category)."""
    return random.Random(f"tensors/{seed}/{key}").randrange(2**63)


def limits_for(device: str, *, quick: bool, full: bool, **given) -> Limits:
    """The default limits, then --quick's and the CPU's caps (unless --full), then what was given."""
    base = Limits()
    caps = {**(QUICK if quick else {})}
    if torch.device(device).type == "cpu" and not full:
        caps = {k: min(v, caps.get(k, v)) for k, v in CPU.items()}
    base = replace(base, **{k: min(getattr(base, k), v) for k, v in caps.items()})
    return replace(base, **{k: v for k, v in given.items() if v is not None})
