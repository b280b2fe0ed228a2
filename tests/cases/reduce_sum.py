"""reduce_sum: input.sum(dim, keepdim), f32 accumulation."""

import torch

from .spec import Case, BenchCase, ErrorCase, T, common_error_cases

API, PREPARE = "reduce_sum", "prepare_reduce_sum"


def correctness_cases():
    return [
        Case("scalar", (T(()),), {"dim": 0}),
        Case("scalar-keepdim", (T(()),), {"dim": -1, "keepdim": True}),
        Case("one", (T((1,)),), {"dim": 0}),
        Case("odd", (T((7,)),), {"dim": 0}),
        Case("not-multiple-of-8", (T((1023,)),), {"dim": -1}),
        Case("empty-row", (T((5, 0)),), {"dim": 1}),
        Case("no-rows", (T((0, 5)),), {"dim": 1}),
        Case("rows", (T((33, 65)),), {"dim": -1}),
        Case("columns", (T((33, 65)),), {"dim": 0}),
        Case("keepdim", (T((33, 65)),), {"dim": 1, "keepdim": True}),
        Case("middle-dim", (T((5, 6, 7)),), {"dim": 1}),
        Case("middle-dim-keepdim", (T((5, 6, 7)),), {"dim": -2, "keepdim": True}),
        Case("transposed-rows", (T((17, 29), layout="transposed"),), {"dim": 1}),
        Case("transposed-columns", (T((17, 29), layout="transposed"),), {"dim": 0}),
        Case("strided", (T((9, 31), layout="strided"),), {"dim": -1}),
        Case("expanded", (T((11, 13), layout="expanded", expand_from=(1, 13)),), {"dim": 0}),
        Case("mid-row", (T((5, 3001)),), {"dim": -1}),
        Case("row-longer-than-block", (T((3, 70_001)),), {"dim": -1}),
        Case("long-rows-split", (T((2, 300_000)),), {"dim": -1}),
        Case("block-per-row", (T((5, 20_000)),), {"dim": -1}),
        Case("long-column", (T((5003, 3)),), {"dim": 0}),
        Case("many-rows", (T((4099, 5)),), {"dim": 1}),
        # short rows (nvidia: 1..32 lanes per row, several rows per warp): rows of one, widths
        # that are and are not multiples of the 16-byte vector, rows not 16-byte aligned
        Case("short-rows-of-one", (T((301, 1)),), {"dim": -1}),
        Case("short-rows-128", (T((1031, 128)),), {"dim": -1}),
        Case("short-rows-unaligned", (T((257, 128), layout="offset"),), {"dim": -1}),
        Case("short-rows-odd", (T((129, 1021)),), {"dim": -1}),
        Case("short-rows-1024", (T((65, 1024)),), {"dim": -1}),
        # tilelang's packed rows (a warp per row, 8 rows per block, up to 512 long): one row, row
        # counts that leave the last block part-full, rows of 3, 255 and the longest packed row;
        # 513 and 1000 take the block kernel
        Case("packed-one-row", (T((1, 128)),), {"dim": -1}),
        Case("packed-rows-of-3", (T((13, 3)),), {"dim": -1}),
        Case("packed-rows-255", (T((27, 255)),), {"dim": -1}),
        Case("packed-rows-512", (T((9, 512)),), {"dim": -1}),
        Case("packed-past-513", (T((3, 513)),), {"dim": -1}),
        Case("rows-1000", (T((11, 1000)),), {"dim": -1}),
        # tilelang's column sums (a contiguous input over a dim that is not innermost): a strip of
        # 32 columns and part of one, 2 columns inside a 3-d tensor, long columns (the kernel's
        # float32 chunks of 1024 rows and a partial one), 5 columns down 100003 rows
        Case("columns-odd", (T((37, 33)),), {"dim": 0}),
        Case("column-of-one", (T((1001, 1)),), {"dim": 0}),  # one column is one row (the rows kernels)
        Case("columns-two-inner", (T((4, 301, 2)),), {"dim": 1}),
        Case("columns-middle-dim", (T((3, 1029, 65)),), {"dim": 1}),
        Case("columns-keepdim", (T((2049, 31)),), {"dim": 0, "keepdim": True}),
        Case("columns-100003x5", (T((100_003, 5)),), {"dim": 0}),
        # nvidia's packed columns (a thread takes 4 f32 or 8 16-bit neighbours as one 16-byte
        # load): a part-full last block, a middle dim, a base off 16 bytes (one by one), and
        # columns split over row ranges (partial sums)
        Case("columns-packed", (T((1001, 72)),), {"dim": 0}),
        Case("columns-packed-middle-dim", (T((3, 1029, 64)),), {"dim": 1}),
        Case("columns-packed-unaligned", (T((257, 64), layout="offset"),), {"dim": 0}),
        Case("columns-packed-split", (T((20_001, 16)),), {"dim": 0}),
        Case("extreme-values", (T((6, 37), values="extreme"),), {"dim": 1}),
        Case("columns-extreme-values", (T((37, 6), values="extreme"),), {"dim": 0}),
        Case("transposed-4d-keepdim", (T((3, 4, 5, 6), layout="transposed"),), {"dim": 2, "keepdim": True}),
    ]


def api_error_cases():
    return common_error_cases((T((4, 5)),), {"dim": 1}, "input") + [
        ErrorCase("dim-out-of-range", (T((4, 5)),), {"dim": 2}, ValueError, "dim=2 is out of range"),
        ErrorCase("dim-negative-out-of-range", (T((4, 5)),), {"dim": -3}, ValueError, "dim=-3 is out of range"),
        ErrorCase("dim-not-int", (T((4, 5)),), {"dim": 1.0}, TypeError, "dim must be an int"),
        ErrorCase("keepdim-not-bool", (T((4, 5)),), {"dim": 1, "keepdim": 1}, TypeError, "keepdim must be a bool"),
        ErrorCase("out-wrong-shape", (T((4, 5)),), {"dim": 1}, ValueError, "out has shape", out=T((5,))),
    ]


# Long float32 sums down dim 0 (and one long column that is a contiguous row), for the accuracy
# test against float64 (tests/runtime/ops/test_reduce_sum.py): where a kernel's accumulation order decides
# how far the result drifts from the exact sum. 100003x8: columns a thread reads as 16-byte packs
# (nvidia), each column its own accumulator. scripts/tilelang_warm.py compiles their kernels too.
LONG_SUMS = [(100_003, 5), (100_003, 8), (1_000_003, 3), (1 << 20, 1)]


def benchmark_cases():
    # (262144, 128): many short rows (a group of lanes per row), 128 MiB of f32
    rows = [BenchCase(s, attrs={"dim": -1})
            for s in ((4096, 1024), (8192, 8192), (4096, 32768), (256, 1048576), (262144, 128))]
    rows += [BenchCase((262144, 128), dtype=torch.bfloat16, attrs={"dim": -1})]
    # down columns (dim 0): one thread per 16-byte pack of adjacent columns (nvidia)
    return rows + [BenchCase((8192, 8192), dtype=d, attrs={"dim": 0}) for d in (torch.float32, torch.float16)]
