"""softmax: torch.softmax(input, dim), numerically stable, f32 accumulation."""

import torch

from .spec import Case, BenchCase, ErrorCase, T, common_error_cases

API, PREPARE = "softmax", "prepare_softmax"


def correctness_cases():
    return [
        Case("scalar", (T(()),), {"dim": 0}),
        Case("one", (T((1,)),), {"dim": 0}),
        Case("odd", (T((7,)),), {"dim": -1}),
        Case("not-multiple-of-8", (T((3, 1023)),), {"dim": -1}),
        Case("empty-rows", (T((5, 0)),), {"dim": 1}),
        Case("no-rows", (T((0, 5)),), {"dim": 1}),
        Case("rows", (T((33, 65)),), {"dim": -1}),
        Case("columns", (T((33, 65)),), {"dim": 0}),
        Case("middle-dim", (T((5, 6, 7)),), {"dim": 1}),
        Case("transposed", (T((17, 29), layout="transposed"),), {"dim": -1}),
        Case("strided", (T((9, 31), layout="strided"),), {"dim": 1}),
        Case("expanded", (T((11, 13), layout="expanded", expand_from=(11, 1)),), {"dim": 1}),
        # one row length per strategy the kernels pick (register-cached tiles, then streaming)
        Case("row-1500", (T((3, 1500)),), {"dim": -1}),
        Case("row-in-block-registers", (T((3, 3001)),), {"dim": -1}),
        Case("row-5000", (T((3, 5000)),), {"dim": -1}),
        Case("row-10000", (T((2, 10_000)),), {"dim": -1}),
        Case("row-in-wide-registers", (T((2, 20_000)),), {"dim": -1}),
        Case("row-longer-than-block", (T((2, 70_001)),), {"dim": -1}),
        Case("long-rows-split", (T((2, 300_000)),), {"dim": -1}),
        # the cp.async kernels (nvidia): rows staged in shared memory through a pipeline that
        # wraps (more rows than blocks), a partial last pack, and long rows cut into pieces
        # that wait for each other, with inf and NaN among them
        Case("staged-rows", (T((700, 2048)),), {"dim": -1}),
        Case("staged-tail", (T((1, 5001)),), {"dim": -1}),
        Case("row-pieces-tail", (T((1, 70_001)),), {"dim": -1}),
        Case("row-pieces-large", (T((3, 40_000), values="large"),), {"dim": -1}),
        Case("row-pieces-extreme", (T((3, 40_000), values="extreme"),), {"dim": -1}),
        Case("row-pieces-all-neg-inf", (T((2, 40_000), values="all_neg_inf"),), {"dim": -1}),
        Case("many-rows", (T((4099, 5)),), {"dim": 1}),
        # short rows (nvidia: 1..32 lanes per row, several rows per warp): rows of one, widths
        # that are and are not multiples of the 16-byte vector, rows not 16-byte aligned, more
        # rows than a block's groups, and the longest short row (odd: not-multiple-of-8)
        Case("short-rows-of-one", (T((301, 1)),), {"dim": -1}),
        Case("short-rows-128", (T((1031, 128)),), {"dim": -1}),
        Case("short-rows-256-extreme", (T((67, 256), values="extreme"),), {"dim": -1}),
        Case("short-rows-unaligned", (T((257, 256), layout="offset"),), {"dim": -1}),
        Case("short-rows-1024", (T((65, 1024)),), {"dim": -1}),
        Case("short-rows-all-neg-inf", (T((9, 64), values="all_neg_inf"),), {"dim": -1}),
        Case("staged-rows-unaligned", (T((33, 2048), layout="offset"),), {"dim": -1}),
        # 16-bit rows of 4097..8192 (nvidia: RowGroups, 512 threads x 16 values, two stages by
        # default): more rows than resident blocks (the stages wrap), and rows whose length is
        # not a multiple of the 16-byte vector (no staging, element tails)
        Case("row-groups-rows", (T((600, 4104)),), {"dim": -1}),
        Case("row-groups-odd", (T((37, 4099)),), {"dim": -1}),
        # whole rows by the copy engine (nvidia, OPRT_SOFTMAX_STRATEGY=bulk...): inf and NaN, rows
        # of -inf, and more rows than the grid's stages hold (they wrap)
        Case("bulk-rows-extreme", (T((40, 4096), values="extreme"),), {"dim": -1}),
        Case("bulk-rows-all-neg-inf", (T((5, 2048), values="all_neg_inf"),), {"dim": -1}),
        # tilelang's packed rows (a warp per row, 8 rows per block, up to 256 long): one row, row
        # counts that leave the last block part-full, rows of 3, 255, a full 256 of -inf (no
        # padding to lower the max), and 257 and 1000 (the cached kernel)
        Case("packed-one-row", (T((1, 200)),), {"dim": -1}),
        Case("packed-rows-of-3", (T((13, 3)),), {"dim": -1}),
        Case("packed-rows-255", (T((27, 255), values="extreme"),), {"dim": -1}),
        Case("packed-full-all-neg-inf", (T((3, 256), values="all_neg_inf"),), {"dim": -1}),
        Case("packed-past-257", (T((5, 257)),), {"dim": -1}),
        Case("rows-1000", (T((3, 1000)),), {"dim": -1}),
        Case("large-values", (T((8, 129), values="large"),), {"dim": -1}),
        Case("inf-and-nan", (T((16, 37), values="extreme"),), {"dim": -1}),
        Case("all-neg-inf", (T((3, 9), values="all_neg_inf"),), {"dim": -1}),
        # the same special values down columns (a strided walk of the softmax dim)
        Case("columns-inf-and-nan", (T((37, 16), values="extreme"),), {"dim": 0}),
        Case("columns-all-neg-inf", (T((9, 3), values="all_neg_inf"),), {"dim": 0}),
        Case("transposed-4d-dim-1", (T((3, 4, 5, 6), layout="transposed"),), {"dim": 1}),
        # tilelang's column softmax (a contiguous input over a dim that is not innermost; 32
        # columns and 128 rows a step per block): a strip and part of one, a middle dim a step
        # and one row long, long columns with few of them, large values down columns
        Case("columns-odd", (T((37, 33)),), {"dim": 0}),
        Case("columns-middle-dim", (T((3, 129, 65)),), {"dim": 1}),
        Case("columns-long-few", (T((3001, 5)),), {"dim": 0}),
        Case("columns-large-values", (T((300, 7), values="large"),), {"dim": 0}),
        # nvidia's column tiles (a block per 32..64 adjacent columns, its warps splitting the
        # walk down them, 16-byte packs of neighbours where aligned): part-full last tiles, a
        # middle dim, a base off 16 bytes (one column per thread), special values in packs,
        # and few long columns (every slot of a 1024-thread block takes many steps)
        Case("columns-packed", (T((1001, 72)),), {"dim": 0}),
        Case("columns-packed-middle-dim", (T((3, 517, 40)),), {"dim": 1}),
        Case("columns-packed-unaligned", (T((257, 64), layout="offset"),), {"dim": 0}),
        Case("columns-packed-extreme", (T((61, 32), values="extreme"),), {"dim": 0}),
        Case("columns-packed-all-neg-inf", (T((9, 16), values="all_neg_inf"),), {"dim": 0}),
        Case("columns-few-long", (T((20_001, 8)),), {"dim": 0}),
    ]


def long_row_cases():
    """Rows past 32768 elements with awkward lengths, for the nvidia kernels that split a row
    over several blocks (Cluster: a thread-block cluster per row, OPRT_SOFTMAX_STRATEGY=cluster;
    the online kernels by default). Too large for every backend's suite: run on the GPU by
    tests/runtime/ops/test_kernel_strategies.py under each long-row strategy. Rows of odd lengths start
    at every alignment (a head before the first 16-byte pack, a tail after the last); "offset"
    puts the input one element past the output's alignment (element-wise stores); 2^20 + 3
    float32 (16 blocks: 256 KiB each) leaves part of each block's run outside shared memory,
    16-bit rows fit."""
    return [
        Case("long-row-2^20+3", (T((1, 2**20 + 3)),), {"dim": -1}),
        Case("long-rows-2^18+1", (T((3, 2**18 + 1)),), {"dim": -1}),
        Case("long-rows-many-odd", (T((19, 32_771)),), {"dim": -1}),
        Case("long-rows-unaligned", (T((5, 65_537), layout="offset"),), {"dim": -1}),
        Case("long-rows-large", (T((3, 2**17 + 1), values="large"),), {"dim": -1}),
        Case("long-rows-extreme", (T((5, 2**17 + 3), values="extreme"),), {"dim": -1}),
        Case("long-rows-all-neg-inf", (T((2, 100_003), values="all_neg_inf"),), {"dim": -1}),
    ]


def api_error_cases():
    return common_error_cases((T((4, 5)),), {"dim": -1}, "input") + [
        ErrorCase("dim-out-of-range", (T((4, 5)),), {"dim": 2}, ValueError, "dim=2 is out of range"),
        ErrorCase("dim-not-int", (T((4, 5)),), {"dim": "last"}, TypeError, "dim must be an int"),
        ErrorCase("out-wrong-shape", (T((4, 5)),), {"dim": 1}, ValueError, "out has shape", out=T((5, 4))),
    ]


def benchmark_cases():
    # (131072, 256): many short rows (a group of lanes per row), 128 MiB of f32 traffic
    f32 = [BenchCase(s, attrs={"dim": -1})
           for s in ((4096, 1024), (8192, 8192), (4096, 32768), (256, 1048576), (131072, 256))]
    halves = [BenchCase(s, dtype=d, attrs={"dim": -1}) for s in ((8192, 8192), (131072, 256))
              for d in (torch.float16, torch.bfloat16)]
    # down columns (dim 0 of a row-major matrix): tilelang's column kernel, nvidia's column tiles
    return f32 + halves + [BenchCase((8192, 8192), dtype=d, attrs={"dim": 0}) for d in (torch.float32, torch.float16)]
