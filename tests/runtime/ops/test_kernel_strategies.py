"""The nvidia kernels' strategy overrides (OPRT_SOFTMAX_STRATEGY, OPRT_REDUCE_SUM_STRATEGY,
OPRT_MATMUL_STRATEGY: wgmma runs the sm_90a kernel where the GPU allows, the others elsewhere):
each value, read when a descriptor is created, still gives torch's results on every
correctness case; an unknown value is refused by name. The default ("auto") is what the
op suites test."""

from __future__ import annotations

import pytest
import torch

import operator_runtime as ort
from cases import exact, extra_atol, load, reference
from cases.spec import DTYPES, T
from operator_runtime_testing.assertions import assert_matches_torch
from operator_runtime_testing.tensors import make_tensor

MODES = {"softmax": ("OPRT_SOFTMAX_STRATEGY", ("cluster", "bulk", "bulk-256-2", "bulk-1024")),
         "reduce_sum": ("OPRT_REDUCE_SUM_STRATEGY", ("old",)),
         "matmul": ("OPRT_MATMUL_STRATEGY", ("mma", "wgmma", "wgmma-pipe", "plain"))}
# The launch-shape overrides (OPRT_*_CONFIG): every kernel shape the sweep
# (scripts/softmax_sweep.py) may try must give torch's results on every case. softmax's
# threads/vals/rows/stages shape the 16-bit rows of 1025 to threads * vals elements (the
# cases row-1500 .. row-groups-odd; keys not given keep the built-in ones: stages=2);
# lanes, prefetch (1: registers, 2-3:
# shared memory) and waves, the short rows (up to 1024); cluster and cluster_kib, Cluster
# (rows past 32768 elements, sm_90) with 1 KiB or none of each block's run in shared memory.
CONFIGS = {"softmax": ("OPRT_SOFTMAX_CONFIG", (
               "threads=512,vals=16,stages=0", "threads=256,vals=32,stages=3", "threads=64,vals=64,rows=4,stages=2",
               "threads=32,vals=64,rows=4", "threads=1024,vals=8", "lanes=1", "lanes=4", "prefetch=1",
               "lanes=32,prefetch=1,waves=64", "lanes=1,prefetch=1", "prefetch=2,waves=4", "lanes=8,prefetch=3",
               "cluster=2,cluster_kib=1", "cluster=16,cluster_kib=0")),
           "reduce_sum": ("OPRT_REDUCE_SUM_CONFIG", ("lanes=1", "lanes=32"))}
SETTINGS = {**{op: variable for op, (variable, _) in MODES.items()},
            **{f"{op}-config": variable for op, (variable, _) in CONFIGS.items()}}
PARAMS = [(op, variable, value) for table in (MODES, CONFIGS) for op, (variable, values) in table.items()
          for value in values]


@pytest.fixture(autouse=True)
def nvidia_only(backend):
    if backend != "nvidia":
        pytest.skip("the overrides choose among the nvidia backend's kernels")


def _id(op: str, variable: str, value: str) -> str:  # pytest -k cannot name '=' or ','
    kind = "-config-" if variable.endswith("_CONFIG") else "-"
    return op + kind + value.replace("=", "").replace(",", "-")


@pytest.mark.parametrize("op,variable,mode", PARAMS, ids=[_id(*p) for p in PARAMS])
def test_every_case_under_the_override(op, variable, mode, backend, device, gen, monkeypatch):
    monkeypatch.setenv(variable, mode)
    cases = load(op)
    prepare = getattr(ort, cases.PREPARE)
    for case in cases.correctness_cases():
        for dtype in DTYPES:
            inputs = [make_tensor(s, dtype, device, gen) if isinstance(s, T) else s for s in case.inputs]
            expected = reference(op, *inputs, **case.attrs)
            out = torch.full(expected.shape, float("nan"), dtype=dtype, device=device)
            with prepare(out, *inputs, **case.attrs, backend=backend) as prepared:  # a new descriptor
                prepared.run()
            assert_matches_torch(out, expected, exact=exact(op), extra_atol=extra_atol(op, *inputs, **case.attrs),
                                 what=f"{op} {case.id} {dtype} under {variable}={mode}")


# The long rows (tests/cases/softmax.py long_row_cases) under each kernel that splits a row
# over blocks: the default (online), Cluster at its default shape (16 or 8 blocks, 224 KiB),
# at 8 blocks, 4 blocks with 100 KiB each, 2 blocks with 1 KiB (runs mostly streamed and read
# twice), 16 blocks with none held.
LONG_ROW_SETTINGS = [("OPRT_SOFTMAX_STRATEGY", "auto"), ("OPRT_SOFTMAX_STRATEGY", "cluster"),
                     ("OPRT_SOFTMAX_CONFIG", "cluster=8"), ("OPRT_SOFTMAX_CONFIG", "cluster=4,cluster_kib=100"),
                     ("OPRT_SOFTMAX_CONFIG", "cluster=2,cluster_kib=1"), ("OPRT_SOFTMAX_CONFIG", "cluster=16,cluster_kib=0")]


def _run_softmax(x, variable, value, backend, monkeypatch):
    monkeypatch.setenv(variable, value)
    out = torch.full_like(x, float("nan"))
    with ort.prepare_softmax(out, x, -1, backend=backend) as prepared:  # a new descriptor
        prepared.run()
    return out


@pytest.mark.parametrize("variable,value", LONG_ROW_SETTINGS, ids=[_id("softmax", *s) for s in LONG_ROW_SETTINGS])
def test_long_rows_under_the_override(variable, value, backend, device, gen, monkeypatch):
    cases = load("softmax")
    for case in cases.long_row_cases():
        for dtype in DTYPES:
            x = make_tensor(case.inputs[0], dtype, device, gen)
            out = _run_softmax(x, variable, value, backend, monkeypatch)
            assert_matches_torch(out, reference("softmax", x, **case.attrs), exact=False, extra_atol=0.0,
                                 what=f"softmax {case.id} {dtype} under {variable}={value}")


@pytest.mark.parametrize("variable,value", LONG_ROW_SETTINGS, ids=[_id("softmax", *s) for s in LONG_ROW_SETTINGS])
def test_long_rows_special_value_in_one_piece(variable, value, backend, device, gen, monkeypatch):
    """One +inf, one NaN or one finite value among -inf, each in a single block's piece (the
    NaN in the tail after the last whole pack): the row is NaN, NaN, one-hot, as in torch; the
    other rows are untouched by them."""
    n = 2**18 + 3
    x = torch.randn(5, n, generator=gen)
    x[1, 12_345] = float("inf")
    x[2, n - 1] = float("nan")
    x[3] = float("-inf")
    x[3, 200_001] = 5.0
    x[4, 99_999] = 80.0  # dominates: exp(x - 80) of the rest underflows toward 0
    for dtype in DTYPES:
        xd = x.to(dtype=dtype, device=device)
        out = _run_softmax(xd, variable, value, backend, monkeypatch).cpu()
        want = torch.softmax(xd.cpu().double(), -1)
        assert out[1].isnan().all() and out[2].isnan().all(), f"{dtype} under {variable}={value}"
        assert out[3, 200_001] == 1 and (out[3, :200_001] == 0).all() and (out[3, 200_002:] == 0).all()
        assert_matches_torch(out[[0, 4]], want[[0, 4]], exact=False, extra_atol=0.0,
                             what=f"softmax special values {dtype} under {variable}={value}")


def _prepare_refused(op, variable, value, match, backend, device, monkeypatch):
    monkeypatch.setenv(variable, value)
    cases = load(op)
    inputs = [torch.randn(4, 5, device=device)] + ([torch.randn(5, 3, device=device)] if op == "matmul" else [])
    attrs = {} if op == "matmul" else {"dim": -1}
    out = torch.empty(reference(op, *inputs, **attrs).shape, device=device)
    with pytest.raises(Exception, match=match):
        getattr(ort, cases.PREPARE)(out, *inputs, **attrs, backend=backend)


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_unknown_value_is_refused(setting, backend, device, monkeypatch):
    variable = SETTINGS[setting]
    _prepare_refused(setting.removesuffix("-config"), variable, "bogus", f"{variable}=bogus", backend, device,
                     monkeypatch)


BAD_CONFIGS = [  # (op, value, what the message must say)
    ("softmax", "threads=48", "threads=48 is not an integer in \\[1, 1024\\], a power of two up to 32 or a multiple of 32"),
    ("softmax", "vals=12", "vals=12 is not an integer in \\[8, 64\\], a power of two"),
    ("softmax", "threads=1024,rows=2", "threads \\* rows = 2048"),
    ("softmax", "threads=8", "threads \\* rows = 8 threads per block is not a multiple of 32"),
    ("softmax", "stages=1", "stages=1 is not 0, 2 or 3"),
    ("softmax", "lanes=64", "lanes=64 is not an integer in \\[1, 32\\]"),
    ("softmax", "warps=4", "unknown key 'warps' \\(keys: threads, vals, rows, stages, lanes, prefetch, waves, cluster, "
                           "cluster_kib\\)"),
    ("softmax", "cluster=3", "cluster=3 is not an integer in \\[2, 16\\], a power of two"),
    ("softmax", "cluster_kib=228", "cluster_kib=228 is not an integer in \\[0, 227\\]"),
    ("softmax", "prefetch=4", "prefetch=4 is not an integer in \\[0, 3\\]"),
    ("softmax", "waves=0", "waves=0 is not an integer in \\[1, 64\\]"),
    ("softmax", "threads=", "threads= is not an integer"),
    ("reduce_sum", "lanes=3", "lanes=3 is not an integer in \\[1, 32\\], a power of two"),
]


@pytest.mark.parametrize("op,value,match", BAD_CONFIGS, ids=[_id(op, "_CONFIG", v) for op, v, _ in BAD_CONFIGS])
def test_bad_config_is_refused_by_name(op, value, match, backend, device, monkeypatch):
    _prepare_refused(op, CONFIGS[op][0], value, match, backend, device, monkeypatch)


# The strategies no row of the softmax table selects were deleted with their overrides
# (issue 27): naming one fails create, listing what is left, rather than timing the default
# under the old name.
@pytest.mark.parametrize("value", ["old", "staged", "rowgrid"])
def test_deleted_softmax_strategy_is_refused(value, backend, device, monkeypatch):
    _prepare_refused("softmax", "OPRT_SOFTMAX_STRATEGY", value,
                     f"OPRT_SOFTMAX_STRATEGY={value} is not one of auto, cluster, bulk,", backend, device, monkeypatch)


def test_deleted_resident_key_is_refused(backend, device, monkeypatch):
    _prepare_refused("softmax", "OPRT_SOFTMAX_CONFIG", "resident=1", "unknown key 'resident'", backend, device,
                     monkeypatch)
