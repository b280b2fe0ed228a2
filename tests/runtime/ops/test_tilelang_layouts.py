"""The tilelang backend's mapping of calls onto kernels (tilelang_backend._layout), where the
generic op suite does not reach: a strided out, bf16 rounding on the C target bit for bit,
dims that do not merge (the rank-8 kernels), and which kernel each case picks."""

from __future__ import annotations

import pytest
import torch

import operator_runtime as ort
from operator_runtime._internal import plan_cache
from operator_runtime.ops import SIGNATURES
from operator_runtime_testing.assertions import assert_matches_torch
from operator_runtime_testing.tolerances import ATOL_PER_TERM

tilelang_backend = pytest.importorskip("operator_runtime._internal.tilelang_backend")


@pytest.fixture
def tl_device(backend, device) -> str:
    if backend != "tilelang":
        pytest.skip("tests of the tilelang backend's layouts")
    return device


def test_coalesce_merges_only_what_every_tensor_steps_over_as_one():
    coalesce = tilelang_backend.coalesce
    assert coalesce((4, 5, 6), [(30, 6, 1), (30, 6, 1)]) == ([120], [[1], [1]])
    # a transposed input stays 2-d; size-1 dims vanish; a broadcast dim keeps stride 0
    assert coalesce((3, 1, 4), [(1, 7, 3), (4, 4, 1)]) == ([3, 4], [[1, 3], [4, 1]])
    assert coalesce((5, 7), [(0, 1), (7, 1)]) == ([5, 7], [[0, 1], [7, 1]])
    assert coalesce((), [(), ()]) == ([1], [[0], [0]])


def _strided_out(shape, dtype, device):
    """An out with gaps and a reversed dim order: every element of it is written or the test fails."""
    big = torch.full((*reversed(shape), 2), float("nan"), dtype=dtype, device=device)
    return big[..., 0].permute(*reversed(range(len(shape))))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_strided_out_for_every_op(tl_device, dtype, gen):
    x = torch.randn(6, 7, 5, generator=gen).to(dtype).to(tl_device)
    y = torch.randn(7, 1, generator=gen).to(dtype).to(tl_device)
    out = _strided_out((6, 7, 5), dtype, tl_device)
    assert ort.vector_add(x, y, out=out, backend="tilelang") is out
    assert_matches_torch(out, x.cpu().double() + y.cpu().double(), what="vector_add strided out")
    out = _strided_out((6, 7, 5), dtype, tl_device)
    ort.copy(y, out=out, backend="tilelang")
    assert_matches_torch(out, y.cpu().double().expand(6, 7, 5), exact=True, what="copy broadcast into strided out")
    out = _strided_out((6, 7, 5), dtype, tl_device)
    ort.softmax(x, 1, out=out, backend="tilelang")
    assert_matches_torch(out, torch.softmax(x.cpu().double(), 1), what="softmax strided out")
    out = _strided_out((6, 5), dtype, tl_device)
    ort.reduce_sum(x, 1, out=out, backend="tilelang")
    want = x.cpu().double().sum(1)
    assert_matches_torch(out, want, extra_atol=ATOL_PER_TERM * x.cpu().double().abs().sum(1), what="reduce_sum")


# (a's shape, b's shape, the broadcast program's (a_inner, b_inner), or None: the strided kernel)
BROADCASTS = [
    ((37, 1029), (1029,), (1, 1)),       # a bias row over every row (b's row stride 0)
    ((37, 1029), (37, 1), (1, 0)),       # a value per row
    ((1, 1029), (37, 1), (1, 0)),        # both broadcast: an outer sum
    ((5, 3, 1029), (3, 1029), (1, 1)),   # a leading batch dim merges with the rows
    ((2053,), (1,), (1, 0)),             # scalar-like: one row
    ((1,), (1029,), (0, 1)),
    ((5, 3, 700), (3, 1), None),         # three dims after coalescing
    ((4099, 7), (7,), None),             # rows shorter than a quarter block: most threads would idle
]


@pytest.mark.parametrize("a_shape,b_shape,inner", BROADCASTS, ids=lambda v: "x".join(map(str, v)) if v else "strided")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_broadcast_add_takes_the_rows_kernel(tl_device, a_shape, b_shape, inner, dtype, gen):
    """A broadcast add of (rows, columns) takes vector_add_broadcast_program (one division per block,
    not per element); its result, on both targets, is torch's."""
    a = torch.randn(a_shape, generator=gen).to(dtype).to(tl_device)
    b = torch.randn(b_shape, generator=gen).to(dtype).to(tl_device)
    out = torch.empty(torch.broadcast_shapes(a.shape, b.shape), dtype=dtype, device=tl_device)
    layout = tilelang_backend._layout(SIGNATURES["vector_add"], out, (a, b), (), tl_device != "cpu")
    assert (layout.program, layout.extra) == (("vector_add_broadcast_program", inner) if inner else
                                              ("vector_add_strided_program", (3,)))
    assert ort.vector_add(a, b, out=out, backend="tilelang") is out
    assert_matches_torch(out, a.cpu().double() + b.cpu().double(), what=f"vector_add {a_shape} + {b_shape}")
    t = (torch.randn(a_shape[::-1], generator=gen).to(dtype).to(tl_device).t()
         if len(a_shape) == 2 and min(a_shape) > 1 else None)
    if t is not None:  # a transposed operand: columns a row apart, not adjacent: the strided kernel
        assert tilelang_backend._layout(SIGNATURES["vector_add"], out, (t, b), (), False).program == \
            "vector_add_strided_program"
        assert_matches_torch(ort.vector_add(t, b, backend="tilelang"), t.cpu().double() + b.cpu().double(),
                             what="vector_add transposed")


def test_bf16_conversions_round_to_nearest_even(tl_device):
    """f32 -> bf16 in the kernel (bits on the C target) equals torch's rounding for ties,
    carries into the exponent, overflow to inf, subnormals, signed zeros, inf and NaN."""
    bits = torch.tensor([0x3F808000, 0x3F818000, 0x3F808001, 0x3F7FFFFF, 0x7F7FFFFF, 0x7F7F8000, 0x00018000,
                         0x80000000, 0x00000000, 0x7F800000, 0xFF800000, 0x7FC00001, 0x807FFFFF, 0x3F80FFFF],
                        dtype=torch.int64).to(torch.int32)
    x = bits.view(torch.float32).to(tl_device)
    got = ort.copy(x, dtype=torch.bfloat16, backend="tilelang")
    want = x.cpu().to(torch.bfloat16)
    assert torch.equal(got.cpu().view(torch.int16)[~want.isnan()], want.view(torch.int16)[~want.isnan()])
    assert torch.equal(got.cpu().isnan(), want.isnan())
    back = ort.copy(got, dtype=torch.float32, backend="tilelang")
    assert torch.equal(back.cpu()[~want.isnan()], want.float()[~want.isnan()])


def test_dims_that_do_not_merge_take_the_rank_8_kernel(tl_device, gen):
    x = torch.randn(2, 3, 4, 5, 3, generator=gen, device="cpu").to(tl_device).permute(4, 2, 0, 3, 1)
    layout = tilelang_backend._layout(SIGNATURES["copy"], torch.empty(x.shape), (x,), (), False)
    assert layout.program == "copy_strided_program" and layout.extra == (8,)
    assert_matches_torch(ort.copy(x, backend="tilelang"), x.cpu().double(), exact=True, what="copy rank 5")
    got = ort.softmax(x, 2, backend="tilelang")
    assert_matches_torch(got, torch.softmax(x.cpu().double(), 2), what="softmax rank 5")


@pytest.mark.parametrize("shape,dim,program", [
    ((4, 5), 1, "reduce_sum_program"),            # rows
    ((4, 5, 1), 1, "reduce_sum_program"),         # later dims of size 1: still rows
    ((4, 5), 0, "reduce_sum_strided_program"),    # columns
    ((4, 5, 6), 1, "reduce_sum_strided_program"),
])
def test_each_reduction_picks_its_kernel(shape, dim, program):
    x = torch.empty(shape)
    out = x.sum(dim)
    assert tilelang_backend._layout(SIGNATURES["reduce_sum"], out, (x,), (dim, 0), False).program == program


@pytest.mark.parametrize("op,shape,dim,program,extra,shapes", [
    # short rows: packed, as many lanes per row as the row fills (strategy tables: ROW_STRATEGY, PACKED)
    ("reduce_sum", (262144, 128), 1, "reduce_sum_program", (256, 8, 16), [(262144, 128), (262144,)]),
    ("reduce_sum", (1131000, 7), 1, "reduce_sum_program", (256, 8, 1), [(1131000, 7), (1131000,)]),
    ("reduce_sum", (1131000, 28), 1, "reduce_sum_program", (256, 8, 4), [(1131000, 28), (1131000,)]),
    ("reduce_sum", (7, 512), -1, "reduce_sum_program", (256, 8, 32), [(7, 512), (7,)]),
    ("reduce_sum", (7, 513), -1, "reduce_sum_program", (128, 8, 128), [(7, 513), (7,)]),
    ("softmax", (131072, 256), -1, "softmax_program", ("packed", 256, 32), [(131072, 256)] * 2),
    ("softmax", (131072, 20), -1, "softmax_program", ("packed", 32, 4), [(131072, 20)] * 2),
    ("softmax", (131072, 100), -1, "softmax_program", ("packed", 128, 16), [(131072, 100)] * 2),
    ("softmax", (5, 257), -1, "softmax_program", ("cached", 1024), [(5, 257)] * 2),
    # a contiguous sum over a dim that is not innermost: (outer, L, inner) column sums
    # ... cut into pieces of rows when its strips give fewer than COLUMN_BLOCKS blocks per SM (132 here)
    ("reduce_sum", (8192, 8192), 0, "reduce_sum_columns_program", (True,), [(1, 8192, 8192), (4, 1, 8192)]),
    ("reduce_sum", (3, 1029, 65), 1, "reduce_sum_columns_program", (True,), [(3, 1029, 65), (2, 3, 65)]),
    ("reduce_sum", (65536, 1024, 64), 1, "reduce_sum_columns_program", (), [(65536, 1024, 64), (65536, 64)]),
    ("reduce_sum", (65, 5000), 0, "reduce_sum_columns_program", (), [(1, 65, 5000), (1, 5000)]),
    # ... but columns of SHORT_COLUMN_ROWS or fewer take the strided kernel, a thread per output
    ("reduce_sum", (64, 5000), 0, "reduce_sum_strided_program", (3,), None),
    ("reduce_sum", (48, 300000), 0, "reduce_sum_strided_program", (3,), None),
    ("reduce_sum", (28, 150022), 0, "reduce_sum_strided_program", (3,), None),
    ("reduce_sum", (0, 5), 0, "reduce_sum_strided_program", (3,), None),
    ("softmax", (33, 65), 0, "softmax_columns_program", (), [(1, 33, 65)] * 2),
    ("softmax", (5, 6, 7), 1, "softmax_columns_program", (), [(5, 6, 7)] * 2),
])
def test_each_gpu_call_picks_its_kernel(op, shape, dim, program, extra, shapes):
    """On the GPU (the layout alone: nothing is compiled or run here)."""
    x = torch.empty(shape)
    out = x.sum(dim) if op == "reduce_sum" else torch.empty(shape)
    layout = tilelang_backend._layout(SIGNATURES[op], out, (x,), (dim, 0) if op == "reduce_sum" else (dim,), True)
    assert (layout.program, layout.extra) == (program, extra)
    if shapes is not None:
        assert layout.shapes == shapes


@pytest.mark.parametrize("x,dim,program,shapes", [
    # a transposed matrix is dense in memory: summed along memory's rows it takes the rows kernel,
    # across them the columns kernel (a thread per output walking 1.9M strided elements took 811 ms)
    (torch.empty(1000, 31).t(), 0, "reduce_sum_program", [(1000, 31), (1000,)]),
    (torch.empty(1000, 31).t(), 1, "reduce_sum_columns_program", [(1, 1000, 31), (1, 31)]),
    (torch.empty(4, 100, 6).permute(1, 0, 2), 0, "reduce_sum_columns_program", [(4, 100, 6), (4, 6)]),
    (torch.empty(7, 1, 9), 1, "reduce_sum_program", [(63, 1), (63,)]),  # d of size 1: rows of one
    # out (allocated in x's logical order) in another order than x's memory: the strided kernel
    (torch.empty(4, 5, 6).permute(1, 0, 2), 2, "reduce_sum_strided_program", None),
    (torch.empty(7, 1, 9).transpose(0, 2), 1, "reduce_sum_strided_program", None),
    (torch.empty(4, 5, 6).permute(2, 0, 1), 1, "reduce_sum_strided_program", None),
    (torch.empty(4, 10)[:, ::2], 1, "reduce_sum_strided_program", None),  # gaps
    (torch.empty(4, 1).expand(4, 6), 1, "reduce_sum_strided_program", None),  # a broadcast overlaps
])
def test_gpu_reduction_follows_memory_order(x, dim, program, shapes):
    """On the GPU (the layout alone: nothing is compiled or run here)."""
    out = x.sum(dim)
    layout = tilelang_backend._layout(SIGNATURES["reduce_sum"], out, (x,), (dim, 0), True)
    assert layout.program == program
    if shapes is not None:
        assert layout.shapes == shapes


def test_gpu_column_pieces_cover_the_rows():
    """A column sum of few strips is cut into pieces of whole chunks that cover every row once, and
    the partials kernel adds them: the sweep's transposed 31 x 1944048 bf16 sum (811 ms on an H100
    through the strided kernel) and a one-piece case."""
    x = torch.empty((1944048, 31), dtype=torch.bfloat16, device="meta").t()
    layout = tilelang_backend._layout(SIGNATURES["reduce_sum"], x.sum(1), (x,), (1, 0), True)
    (piece_len,), pieces = layout.scalars, layout.shapes[1][0]
    assert layout.program == "reduce_sum_columns_program" and layout.extra == (True,)
    assert piece_len % tilelang_backend.kernels("reduce_sum").PIECE_ROWS == 0
    assert (pieces - 1) * piece_len < 1944048 <= pieces * piece_len
    assert layout.then.program == "reduce_sum_partials_program"
    assert layout.then.shapes == [(pieces, 31), (31,)]
    x = torch.empty((1000, 31), device="meta").t()  # fewer rows than one piece: one pass
    layout = tilelang_backend._layout(SIGNATURES["reduce_sum"], x.sum(1), (x,), (1, 0), True)
    assert (layout.extra, layout.scalars, layout.then) == ((), (1000,), None)


@pytest.mark.parametrize("rows,row_len", [(1, 1365746), (256, 1048576), (205, 50257), (263, 16384)])
def test_gpu_few_long_rows_are_cut_into_pieces(rows, row_len):
    """Fewer rows than two blocks per SM, each of 16384 or more: pieces of whole steps covering every
    element once, a partial each, then the partials' sums; the sweep's one row of 1.4M (0.13x torch
    on an H100 in one block) is one of them."""
    module = tilelang_backend.kernels("reduce_sum")
    x = torch.empty((rows, row_len), device="meta")
    layout = tilelang_backend._layout(SIGNATURES["reduce_sum"], x.sum(1), (x,), (1, 0), True)
    (piece_len,), pieces = layout.scalars, layout.shapes[1][0]
    assert layout.program == "reduce_sum_row_pieces_program" and layout.shapes == [(rows, row_len), (pieces, rows)]
    assert piece_len % (module.ROW_PIECE_THREADS * module.ROW_PIECE_UNROLL) == 0
    assert pieces > 1 and (pieces - 1) * piece_len < row_len <= pieces * piece_len
    assert layout.then.program == "reduce_sum_partials_program" and layout.then.shapes == [(pieces, rows), (rows,)]


@pytest.mark.parametrize("rows,row_len", [(264, 16384), (4096, 32768), (263, 16383), (1, 4096)])
def test_gpu_rows_enough_or_short_stay_whole(rows, row_len):
    x = torch.empty((rows, row_len), device="meta")
    layout = tilelang_backend._layout(SIGNATURES["reduce_sum"], x.sum(1), (x,), (1, 0), True)
    assert (layout.program, layout.then) == ("reduce_sum_program", None)


@pytest.mark.parametrize("shape,dim,transpose,dtype", [
    ((1, 1365746), 1, False, torch.float32),      # one long row: row pieces
    ((3, 70001), -1, False, torch.float32),       # odd lengths
    ((100003, 31), 0, True, torch.float32),       # transposed: column pieces
    ((100003, 31), 0, True, torch.bfloat16),
    ((3000, 700), 0, False, torch.float32),       # dim 0, few strips
    ((3000, 700), 0, False, torch.float16),
    ((5, 2049, 3), 1, False, torch.float32),      # a last piece of one row
], ids=["one-long-row", "odd-rows", "transposed", "transposed-bf16", "dim0", "dim0-f16", "3d"])
def test_pieces_sum_every_element_once(tl_device, shape, dim, transpose, dtype, gen):
    """The sums cut into pieces (on a GPU; the C target sums whole rows) match float64. Terms in [1, 2)
    make an element summed twice or skipped at a piece's edge an error of at least 1, far above
    float32's rounding of these sums (< 0.2), so float32 results are held to that."""
    x = (1 + torch.rand(shape, generator=gen)).to(dtype).to(tl_device)
    if transpose:  # the memory is (shape); the call sees its transpose, summed over memory's rows
        x, dim = x.t(), 1 - dim
    got = ort.reduce_sum(x, dim, backend="tilelang")
    want = x.cpu().double().sum(dim)
    assert_matches_torch(got, want, extra_atol=ATOL_PER_TERM * x.cpu().double().abs().sum(dim), what="pieces")
    if dtype == torch.float32:
        assert (got.cpu().double() - want).abs().max() < 0.5


def test_gpu_columns_kernel_needs_out_in_x_order():
    """An out with gaps, or in another order than x, keeps the strided kernel on the GPU."""
    x = torch.empty(4, 5)
    out = torch.empty(5, 2)[:, 0]
    layout = tilelang_backend._layout(SIGNATURES["reduce_sum"], out, (x,), (0, 0), True)
    assert layout.program == "reduce_sum_strided_program"
    out = torch.empty(5, 4).t()
    assert tilelang_backend._layout(SIGNATURES["softmax"], out, (x,), (0,), True).program == "softmax_strided_program"
    # a transposed input with an out of its own strides is a column softmax of memory
    x = torch.empty(9, 4).t()
    out = torch.empty(9, 4).t()
    layout = tilelang_backend._layout(SIGNATURES["softmax"], out, (x,), (1,), True)
    assert (layout.program, layout.shapes) == ("softmax_columns_program", [(1, 9, 4)] * 2)


def test_strided_plan_is_cached_and_reused(tl_device, gen):
    x = torch.randn(9, 31, generator=gen).to(tl_device).t()
    first = ort.softmax(x, 0, backend="tilelang")
    before = plan_cache.cache_info().hits
    x2 = torch.randn(9, 31, generator=gen).to(tl_device).t()
    second = ort.softmax(x2, 0, backend="tilelang")
    assert_matches_torch(first, torch.softmax(x.cpu().double(), 0), what="first call")
    assert_matches_torch(second, torch.softmax(x2.cpu().double(), 0), what="second call (cached plan)")
    assert plan_cache.cache_info().hits > before, "the second call of one layout must reuse the plan"


def test_sum_over_an_empty_column_is_zero(tl_device):
    """The strided kernel with nothing to sum (L = 0, an input buffer of length 0) writes zeros."""
    x = torch.empty(0, 5, device=tl_device)
    out = torch.full((5,), float("nan"), device=tl_device)
    layout = tilelang_backend._layout(SIGNATURES["reduce_sum"], out, (x,), (0, 0), False)
    assert layout.program == "reduce_sum_strided_program"
    assert torch.equal(ort.reduce_sum(x, 0, out=out, backend="tilelang").cpu(), torch.zeros(5))


def test_a_matmul_plan_refuses_misaligned_pointers_on_every_call():
    """The eager plan cache keys layouts, not offsets: a GPU matmul plan (TMA copies) reused for a
    view one element past a 16-byte boundary must refuse it by name, as prepare does, not fail in
    the TMA descriptor; aligned pointers (and an empty operand's NULL) go through."""
    from operator_runtime._internal.tilelang_backend import AlignmentCheckedPlan
    from operator_runtime.errors import UnsupportedError

    calls = []

    class Plan:
        def call(self, *args):
            calls.append(args)
            return 0

        def launch(self, pointers, stream=None):
            calls.append(("launch", pointers))

        def close(self):
            calls.append("closed")

    plan = AlignmentCheckedPlan(Plan(), "matmul")
    assert plan.call(4096, 8192, 0, None) == 0 and calls == [(4096, 8192, 0, None)]
    with pytest.raises(UnsupportedError, match="16-byte aligned.*2 bytes past"):
        plan.call(4096, 8194, 8192, 7)
    assert len(calls) == 1
    plan.close()
    assert calls[-1] == "closed"
