"""reduce_sum in TileLang: Y = X summed over one dim, in float32.

The runtime picks among these programs (tilelang_backend.py) by the input's memory order: a dense
input (contiguous, or permuted: a transposed matrix) is read as rows or columns of its memory.
- rows (``reduce_sum_program``): the reduced dim innermost in memory, viewed as (rows, row_len).
  Both sizes are dynamic int64, so one compiled kernel serves every shape.
- columns (``reduce_sum_columns_program``, GPU only): the reduced dim not innermost in memory,
  viewed as (outer, L, inner); see STRIP below. Columns of SHORT_COLUMN_ROWS or fewer go strided.
- pieces (GPU only): few long rows (``reduce_sum_row_pieces_program``) or few column strips
  (the columns program with ``partials``) are cut into pieces, each summed into a float32
  partial; ``reduce_sum_partials_program`` adds a row's or column's partials in float64.
- strided (``reduce_sum_strided_program``): anything else. The input is viewed as (outer,
  reduce): ``outer`` runs over out's elements in any layout (sizes and strides in the int64
  tensor M, see operator_runtime/_internal/tilelang_prims.py), ``reduce`` is the summed dim
  with its own stride. Each GPU thread sums one output element serially; neighbouring threads
  take neighbouring outputs, so a sum over dim 0 of a row-major matrix reads contiguous spans.

Rows on the GPU, picked by row length (``gpu_strategy``):
- packed (rows up to 512): `lanes` threads per row (1 to 32, as many as the row fills), several
  rows per block. The fragment is (unroll, rows, lanes) and the loop runs over it in that order,
  so TileLang gives thread (row, lane) the `unroll` values lane + u * lanes of its row: a warp
  reads 32 / lanes rows' adjacent values per load, the sum over `unroll` stays in the thread and
  the sum over lanes is a shuffle within the warp (none for one lane; no shared memory, no
  block barrier).
- block: a block per row, its thread count picked by row length. Each step,
  every thread loads `unroll` adjacent values (a warp reads one contiguous span) and adds them
  into its partial sum; then the block combines the partial sums (T.reduce_sum over a
  fragment lowers to a shuffle + shared-memory reduce).
Rows on the CPU (TileLang's C target has no fragments or block reductions): one program per
row walks it serially into a local float32 accumulator. bfloat16 there is stored as its
uint16 bits (``storage``/``load``/``store``).
"""

import tilelang.language as T

from operator_runtime._internal.tilelang_prims import load, offsets, storage, store

# (longest row, threads per block, values each thread loads per step, threads per row), the
# block kernels measured on the H200 with scripts/tilelang_tune.py. Each step keeps `unroll` loads
# in flight per thread; a few long rows need whole SMs of threads. Rows up to 512 are packed into
# 256-thread blocks, `lanes` threads per row with lanes * 8 >= the row where it fits: a warp per row
# left 25 of its 32 lanes idle on rows of 7 (12135267 x 7 f16 ran at 0.06x torch on an H100) and
# 20 on rows of 28 (0.20x); a thread per row of up to 8 reads them all in one step, lanes of 4 the
# rows up to 32. Rows of 129 to 512, a warp each: 8 loads per step (a 256-long row is one step of 8
# loads in flight, not two of 4; shorter rows predicate the rest off, no traffic), 2 steps at most;
# longer rows keep the block kernel (1.7x torch at 4096x1024). The packed entries are reasoned,
# not yet measured (tilelang_tune.py times their candidates).
ROW_STRATEGY = ((8, 256, 8, 1), (32, 256, 8, 4), (64, 256, 8, 8), (128, 256, 8, 16), (512, 256, 8, 32),
                (2048, 128, 8, 128), (32768, 256, 8, 256), (None, 1024, 8, 1024))
GPU_VARIANTS = [(threads, unroll, lanes) for _, threads, unroll, lanes in ROW_STRATEGY]  # what gpu_strategy picks


# Terms summed in float32 before the partial joins a float64 total: one long float32 running sum
# loses ~L ulps (7.6x torch's error at L = 100003, measured); CHUNK-term partials lose ~CHUNK, and
# the float64 total nothing more (the nvidia backend's column sums do the same)
CHUNK = 64


def gpu_strategy(row_len: int) -> tuple[int, int, int]:
    """(threads, unroll, threads per row) for this row length: the runtime compiles one kernel per entry."""
    for longest, threads, unroll, lanes in ROW_STRATEGY:
        if longest is None or row_len <= longest:
            return threads, unroll, lanes


def reduce_sum_program(dtype: str, gpu: bool, threads: int = 256, unroll: int = 8, lanes: int | None = None):
    """lanes: threads per row (all of the block's when None or `threads`; fewer: packed rows)."""
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    stored = storage(dtype, gpu)
    if gpu and lanes is not None and lanes < threads:
        return _reduce_sum_packed(dtype, rows, row_len, threads, unroll, lanes)
    if gpu:
        STEP = threads * unroll  # elements the block loads per step

        @T.prim_func
        def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
            with T.Kernel(rows, threads=threads) as row:
                x = T.alloc_fragment((threads, unroll), "float32")
                partial = T.alloc_fragment((threads,), "float32")
                total = T.alloc_fragment((1,), "float32")
                T.clear(partial)
                for k in T.serial(T.ceildiv(row_len, STEP)):
                    for t, u in T.Parallel(threads, unroll):
                        j = k * STEP + t * unroll + u
                        x[t, u] = T.if_then_else(j < row_len, T.cast(X[row, j], "float32"), 0.0)
                    T.reduce_sum(x, partial, dim=1, clear=False)  # within each thread: no communication
                T.reduce_sum(partial, total, dim=0)               # across the block
                Y[row] = T.cast(total[0], dtype)

        return reduce_sum

    @T.prim_func
    def reduce_sum_cpu(X: T.Tensor((rows, row_len), stored), Y: T.Tensor((rows,), stored)):
        with T.Kernel(rows) as row:  # one program per row, in turn: CHUNK-term partials (see CHUNK)
            total = T.alloc_local((1,), "float64")
            part = T.alloc_local((1,), "float32")
            total[0] = 0.0
            for c in T.serial(T.ceildiv(row_len, CHUNK)):
                part[0] = 0.0
                for j in T.serial(T.min(CHUNK, row_len - c * CHUNK)):
                    part[0] += load(X[row, c * CHUNK + j], dtype, gpu)
                total[0] += T.cast(part[0], "float64")
            Y[row] = store(T.cast(total[0], "float32"), dtype, gpu)

    return reduce_sum_cpu


# Few long rows leave SMs idle in the block kernel (a block per row): one row of 1365746 f32 ran in
# one block at 0.13x torch on an H100, 256 rows of 1M (1.9 waves of 1024-thread blocks) at 0.96x on
# the H200. Fewer than ROW_SPLIT_BELOW blocks per SM are cut into pieces of whole steps, each a
# block of the kernel below writing a float32 partial, (pieces, rows); reduce_sum_partials_program
# adds a row's partials in float64, as for the column pieces.
ROW_PIECE_THREADS, ROW_PIECE_UNROLL = 256, 8
ROW_SPLIT_BELOW = 2    # blocks per SM under which rows are cut ...
ROW_SPLIT_MIN = 16384  # ... if at least this long: a shorter row is a few steps of one block, where a
                       # second launch (the partials' sum, a few us) would cost more than it saves
ROW_PIECE_BLOCKS = 16  # blocks of 256 per SM the pieces fill: two waves of the 8 an SM holds


def row_pieces(rows: int, row_len: int, sms: int) -> tuple[int, int]:
    """(pieces, piece_len): (1, row_len) for rows the packed or block kernels serve as they are."""
    step = ROW_PIECE_THREADS * ROW_PIECE_UNROLL
    if row_len < ROW_SPLIT_MIN or rows >= ROW_SPLIT_BELOW * sms:
        return 1, row_len
    pieces = min(-(-ROW_PIECE_BLOCKS * sms // max(rows, 1)), -(-row_len // step))
    if pieces <= 1:
        return 1, row_len
    piece_len = -(-row_len // pieces // step) * step
    return -(-row_len // piece_len), piece_len


def reduce_sum_row_pieces_program(dtype: str, gpu: bool):
    """P[piece, r] = the float32 sum of X[r, piece * piece_len : (piece + 1) * piece_len] (to the row's
    end): a block per (row, piece), as the block kernel sums a row."""
    rows, row_len, pieces = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64"), T.dynamic("pieces", "int64")
    threads, unroll = ROW_PIECE_THREADS, ROW_PIECE_UNROLL
    STEP = threads * unroll
    if not gpu:
        raise ValueError("reduce_sum_row_pieces_program is a GPU kernel: the C target sums a row in one program")

    @T.prim_func
    def reduce_sum_row_pieces(X: T.Tensor((rows, row_len), dtype), P: T.Tensor((pieces, rows), "float32"),
                              piece_len: T.int64):
        with T.Kernel(rows * pieces, threads=threads) as b:
            where = T.alloc_local((2,), "int64")  # (row, first element): divided once per block
            where[0] = b % rows
            where[1] = b // rows * piece_len
            row, start = where[0], where[1]
            x = T.alloc_fragment((threads, unroll), "float32")
            partial = T.alloc_fragment((threads,), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(partial)
            for k in T.serial(T.ceildiv(T.min(piece_len, row_len - start), STEP)):
                for t, u in T.Parallel(threads, unroll):
                    j = start + k * STEP + t * unroll + u
                    x[t, u] = T.if_then_else(j < row_len, T.cast(X[row, j], "float32"), 0.0)
                T.reduce_sum(x, partial, dim=1, clear=False)  # within each thread
            T.reduce_sum(partial, total, dim=0)               # across the block
            P[b // rows, row] = total[0]

    return reduce_sum_row_pieces


def _reduce_sum_packed(dtype, rows, row_len, threads, unroll, lanes):
    # a row's lanes are adjacent threads within one warp: its sum is shuffles only
    if lanes not in (1, 2, 4, 8, 16, 32) or threads % lanes:
        raise ValueError(f"packed rows take 1..32 lanes (a power of two) dividing threads; got lanes={lanes}, "
                         f"threads={threads}")
    R = threads // lanes  # rows per block
    STEP = lanes * unroll  # elements of a row its lanes load per step

    @T.prim_func
    def reduce_sum_packed(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(T.ceildiv(rows, R), threads=threads) as bx:
            # loop order (u, r, lane), fragment to match: thread r * lanes + lane holds x[:, r, lane]
            x = T.alloc_fragment((unroll, R, lanes), "float32")
            partial = T.alloc_fragment((R, lanes), "float32")
            total = T.alloc_fragment((R,), "float32")
            T.clear(partial)
            for k in T.serial(T.ceildiv(row_len, STEP)):
                for u, r, lane in T.Parallel(unroll, R, lanes):
                    j = k * STEP + u * lanes + lane
                    # the last block's rows past `rows` load nothing (and store nothing below)
                    x[u, r, lane] = T.if_then_else(j < row_len and bx * R + r < rows,
                                                   T.cast(X[bx * R + r, j], "float32"), 0.0)
                T.reduce_sum(x, partial, dim=0, clear=False)  # within each thread
            T.reduce_sum(partial, total, dim=1)                # across a row's lanes: a warp shuffle
            for r in T.Parallel(R):
                if bx * R + r < rows:
                    Y[bx * R + r] = T.cast(total[r], dtype)

    return reduce_sum_packed


# Column sums on the GPU (reduce_sum_columns_program): a contiguous input summed over a dim that
# is not innermost, viewed as (outer, L, inner): out[o, c] = sum over i < L of X[o, i, c]. A block
# takes STRIP adjacent columns of one `o` and SWEEP rows at a time: thread (r, c) loads rows
# r, r + SWEEP, ... of column c, so each warp reads STRIP adjacent values of one row (contiguous),
# where the strided kernel's one thread per column made a warp read 32 separate rows' worth of
# sectors per step (8192x8192 over dim 0: 3.49 ms, 0.02x torch). Each thread adds CHUNK terms in
# float32 (UNROLL rows per step, loads in flight), carries the chunk into a float64 total, and
# the block adds its SWEEP totals per column in float64: no running float32 sum longer than
# CHUNK, as in the strided kernel (issue 16's long columns).
STRIP, SWEEP, COLUMN_UNROLL = 32, 16, 8  # 512 threads: 16 rows x 32 columns, 8 rows each per step
PIECE_ROWS = SWEEP * COLUMN_UNROLL * (CHUNK // COLUMN_UNROLL)  # rows a block sums per chunk (1024)

# Few columns (outer x strips blocks) give few blocks: a sum over dim 1 of a transposed 31 x 1944048
# matrix is one strip of (1944048, 31) memory, one block. Then the rows are cut into `pieces` of
# `piece_len` (a multiple of PIECE_ROWS) and each block sums one piece of its strip into a float32
# partial, (pieces, outer, inner); reduce_sum_partials_program adds a column's partials in float64.
# A piece of >= 1024 rows writes 4 bytes per column for >= 1024 elements read.
# The grid the pieces fill: two waves of the 4 blocks of 512 threads an SM holds. A 16-bit column
# load is 2 bytes a thread: 8192 x 8192 f16 over dim 0 in 256 blocks (2 per SM, ~16 KiB in flight
# each) ran at 0.23x torch on the H200, where the f32 sum, twice the bytes per load, reached 1.05x.
COLUMN_BLOCKS = 8

# Short columns take the strided kernel instead: a thread per output, adjacent threads on adjacent
# columns (coalesced), each adding its L terms. The columns kernel's block loads 128 rows a step,
# 8 steps a chunk, so a sum over dim 0 of 28 rows masked 100 of the 128 row loads of its first step
# and all of the other 7. Measured on an H100 (2026-12-07, triton do_bench against torch.sum, results
# checked against float64; data/results-log.md), torch's time over ours with this bound at 0 / 32 / 64:
# 28 x 150022 bf16 0.21x / 0.52x / 0.52x, 16 x 2^20 f32 0.12 / 0.57 / 0.57, 8 x 2e6 bf16 0.04 / 0.26 / 0.26,
# 5000 x 20 x 300 bf16 over dim 1 0.08 / 0.33 / 0.33, 48 x 300000 bf16 0.19 / 0.19 / 0.39, 64 x 87568 f16
# 0.25 / 0.25 / 0.32; 200 and 100 rows unchanged (0.36x, 0.22x); 1000 x 40 x 33 f32 over dim 1 0.50 / 0.48 /
# 0.45, the one shape that loses. Both kernels stay far below torch on these shapes (issue 29).
SHORT_COLUMN_ROWS = 64


def column_pieces(outer: int, L: int, inner: int, sms: int) -> tuple[int, int]:
    """(pieces, piece_len): one piece of L rows unless the strips leave SMs idle."""
    blocks = outer * -(-inner // STRIP)
    pieces = max(1, min(-(-COLUMN_BLOCKS * sms // max(blocks, 1)), -(-L // PIECE_ROWS)))
    piece_len = -(-L // pieces // PIECE_ROWS) * PIECE_ROWS if pieces > 1 else L
    return -(-L // piece_len) if pieces > 1 else 1, piece_len


def reduce_sum_columns_program(dtype: str, gpu: bool, partials: bool = False):
    """Y[o, c] = sum of X[o, :, c]; partials: P[piece, o, c] = the float32 sum of the piece's
    `piece_len` rows (the last piece: to L), summed by reduce_sum_partials_program."""
    outer, L, inner = T.dynamic("outer", "int64"), T.dynamic("L", "int64"), T.dynamic("inner", "int64")
    pieces = T.dynamic("pieces", "int64")
    if not gpu:
        raise ValueError("reduce_sum_columns_program is a GPU kernel: the C target takes reduce_sum_strided_program")
    STEP = SWEEP * COLUMN_UNROLL  # rows the block loads per step
    STEPS = CHUNK // COLUMN_UNROLL  # steps per float32 chunk (CHUNK terms per thread)
    out_shape, out_dtype = ((pieces, outer, inner), "float32") if partials else ((outer, inner), dtype)

    @T.prim_func
    def reduce_sum_columns(X: T.Tensor((outer, L, inner), dtype), Y: T.Tensor(out_shape, out_dtype),
                           piece_len: T.int64):
        strips = T.ceildiv(inner, STRIP)
        # one grid dim (gridDim.y stops at 65535 blocks; outer has no such bound)
        with T.Kernel(strips * outer * (pieces if partials else 1), threads=STRIP * SWEEP) as b:
            where = T.alloc_local((3,), "int64")  # (o, first column, first row): divided once, not per load
            where[0] = b // strips % outer
            where[1] = b % strips * STRIP
            where[2] = b // (strips * outer) * piece_len
            o, col0, row0 = where[0], where[1], where[2]
            # loop order (u, r, c), fragment to match: thread r * STRIP + c holds x[:, r, c]
            x = T.alloc_fragment((COLUMN_UNROLL, SWEEP, STRIP), "float32")
            part = T.alloc_fragment((SWEEP, STRIP), "float32")
            total = T.alloc_fragment((SWEEP, STRIP), "float64")
            column = T.alloc_fragment((STRIP,), "float64")
            T.clear(total)
            rows = T.min(piece_len, L - row0)  # this block's rows, from row0
            for chunk in T.serial(T.ceildiv(rows, STEP * STEPS)):
                T.clear(part)
                # a chunk's steps up to its last row only: the last (or only) chunk of a column shorter
                # than 1024 rows would otherwise run steps whose every load is masked
                for step in T.serial(T.min(STEPS, T.ceildiv(rows - chunk * (STEP * STEPS), STEP))):
                    for u, r, c in T.Parallel(COLUMN_UNROLL, SWEEP, STRIP):
                        i = row0 + (chunk * STEPS + step) * STEP + u * SWEEP + r
                        x[u, r, c] = T.if_then_else(i < L and col0 + c < inner,
                                                    T.cast(X[o, i, col0 + c], "float32"), 0.0)
                    T.reduce_sum(x, part, dim=0, clear=False)  # within each thread
                for r, c in T.Parallel(SWEEP, STRIP):
                    total[r, c] += T.cast(part[r, c], "float64")
            T.reduce_sum(total, column, dim=0)  # across the SWEEP threads of each column
            for c in T.Parallel(STRIP):
                if col0 + c < inner:
                    if partials:
                        Y[b // (strips * outer), o, col0 + c] = T.cast(column[c], "float32")
                    else:
                        Y[o, col0 + c] = T.cast(T.cast(column[c], "float32"), dtype)

    return reduce_sum_columns


PARTIALS_THREADS = 256


def reduce_sum_partials_program(dtype: str, gpu: bool):
    """Y[j] = the float64 sum of P[:, j], rounded once: a thread per output, adjacent threads on
    adjacent partials (the pieces of reduce_sum_columns_program(partials=True))."""
    pieces, n = T.dynamic("pieces", "int64"), T.dynamic("n", "int64")
    if not gpu:
        raise ValueError("reduce_sum_partials_program is a GPU kernel: the C target sums whole rows and columns")

    @T.prim_func
    def reduce_sum_partials(P: T.Tensor((pieces, n), "float32"), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, PARTIALS_THREADS), threads=PARTIALS_THREADS) as bx:
            total = T.alloc_fragment((PARTIALS_THREADS,), "float64")
            T.clear(total)
            for k in T.serial(pieces):
                for t in T.Parallel(PARTIALS_THREADS):
                    if bx * PARTIALS_THREADS + t < n:
                        total[t] += T.cast(P[k, bx * PARTIALS_THREADS + t], "float64")
            for t in T.Parallel(PARTIALS_THREADS):
                if bx * PARTIALS_THREADS + t < n:
                    Y[bx * PARTIALS_THREADS + t] = T.cast(T.cast(total[t], "float32"), dtype)

    return reduce_sum_partials


# The strided kernel: one thread per output element, this many per GPU block.
STRIDED_THREADS = 256


def reduce_sum_strided_program(dtype: str, gpu: bool, rank: int):
    """Y[o] = sum over r < L of X[x(o) + r * sx], for the n outputs o. M: out's sizes, then the
    input's and out's strides over them (rank each); nx, ny: the buffers' extents."""
    nx, ny = T.dynamic("nx", "int64"), T.dynamic("ny", "int64")
    stored = storage(dtype, gpu)
    if gpu:
        @T.prim_func
        def reduce_sum_strided(X: T.Tensor((nx,), stored), Y: T.Tensor((ny,), stored), M: T.Tensor((3 * rank,), "int64"),
                               n: T.int64, L: T.int64, sx: T.int64):
            with T.Kernel(T.ceildiv(n, STRIDED_THREADS), threads=STRIDED_THREADS) as bx:
                total = T.alloc_fragment((STRIDED_THREADS,), "float64")
                part = T.alloc_fragment((STRIDED_THREADS,), "float32")
                xo = T.alloc_fragment((STRIDED_THREADS,), "int64")
                for i in T.Parallel(STRIDED_THREADS):
                    total[i] = 0.0
                    xo[i] = offsets(T.min(bx * STRIDED_THREADS + i, n - 1), M, rank, 2)[0]
                for c in T.serial(T.ceildiv(L, CHUNK)):
                    for i in T.Parallel(STRIDED_THREADS):
                        part[i] = 0.0
                    for r in T.serial(CHUNK):
                        for i in T.Parallel(STRIDED_THREADS):
                            if bx * STRIDED_THREADS + i < n and c * CHUNK + r < L:
                                part[i] += load(X[xo[i] + (c * CHUNK + r) * sx], dtype, gpu)
                    for i in T.Parallel(STRIDED_THREADS):
                        total[i] += T.cast(part[i], "float64")
                for i in T.Parallel(STRIDED_THREADS):
                    if bx * STRIDED_THREADS + i < n:
                        Y[offsets(bx * STRIDED_THREADS + i, M, rank, 2)[1]] = store(T.cast(total[i], "float32"), dtype, gpu)

        return reduce_sum_strided

    @T.prim_func
    def reduce_sum_strided_cpu(X: T.Tensor((nx,), stored), Y: T.Tensor((ny,), stored),
                               M: T.Tensor((3 * rank,), "int64"), n: T.int64, L: T.int64, sx: T.int64):
        with T.Kernel(n) as o:
            total = T.alloc_local((1,), "float64")
            part = T.alloc_local((1,), "float32")
            total[0] = 0.0
            x, y = offsets(o, M, rank, 2)
            for c in T.serial(T.ceildiv(L, CHUNK)):
                part[0] = 0.0
                for r in T.serial(T.min(CHUNK, L - c * CHUNK)):
                    part[0] += load(X[x + (c * CHUNK + r) * sx], dtype, gpu)
                total[0] += T.cast(part[0], "float64")
            Y[y] = store(T.cast(total[0], "float32"), dtype, gpu)

    return reduce_sum_strided_cpu
