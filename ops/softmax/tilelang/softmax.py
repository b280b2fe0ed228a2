"""softmax in TileLang: Y[r, :] = exp(X[r, :] - max) / sum(exp(X[r, :] - max)), last dim.

The runtime views a contiguous input whose softmax dim is innermost as (rows, row_len) and runs
the kernels below; on the GPU a contiguous input and out over another dim run
``softmax_columns_program`` (viewed as (outer, L, inner), see STRIP below); any other dim or
layout (transposed, sliced, expanded inputs, a strided out, and every other dim on the C
target) runs ``softmax_strided_program``: one thread per row of the softmax
dim, walking it with its stride (sizes and strides in the int64 tensor M, see
operator_runtime/_internal/tilelang_prims.py). Statistics are float32 whatever the storage
dtype, as in the CUDA kernels; bfloat16 on the C target is stored as its uint16 bits.

Special values come out as torch's without a NaN-aware max: a NaN (or a +inf, since
inf - inf is NaN) makes exp(x - max) NaN, the row's sum NaN, and so every output of the
row NaN; a row of -inf gives 0 / 0 = NaN. Running maxima start at LOWEST (the most
negative finite float), never -inf, so exp(-inf - LOWEST) is a clean 0, not exp(NaN).

Three GPU strategies, picked per row length by the runtime (``gpu_strategy``):
- packed: short rows (up to PACKED_TILE), `lanes` threads (up to a warp) per row and
  PACKED_THREADS // lanes rows per block, each cached in registers as below. A 256-long row
  alone in a 1024-tile block of 128 threads left 3/4 of it padding (131072x256 ran at 0.53x
  torch on the H200). The fragment is (values, rows, lanes), looped in that order, so thread
  (row, lane) holds values lane + v * lanes of its row: a warp reads 32 / lanes rows' adjacent
  values per load and a row's max and sum are shuffles within the warp.
- cached: the row fits in registers (a TILE-element fragment, VALUES_PER_THREAD per thread), so it is
  read from memory once: load, T.reduce_max, exponentiate in place, T.reduce_sum, scale, store.
- online: longer rows. One pass keeps a running (max, sum) per thread, rescaling the sum when
  the max grows; the block combines the THREADS pairs; a second pass writes. 12 bytes of
  traffic per f32 element instead of 8, but any row length.
CPU (TileLang's C target has no fragments or block reductions): the three textbook passes over
one row per program, serially.
"""

import tilelang.language as T

from operator_runtime._internal.tilelang_prims import load, offsets, storage, store

VALUES_PER_THREAD = 16  # cached strategy: 16 registers of row per thread keep ~3 blocks of 512 per SM
ONLINE_THREADS = 1024  # online strategy default: long rows, often few of them; a full SM's worth of loads
UNROLL = 8            # online strategy: values per thread per step
LOWEST = -3.4028234663852886e38
# Fragment sizes compiled for the cached strategy. A 32768 tile (1024 threads x 32 values: 64
# registers, a small spill, one block per SM) measured 0.63 ms at 4096x32768 on the H200 against
# 0.52 ms for the online kernel (scripts/tilelang_tune.py), so longer rows than 16384 go online.
CACHED_TILES = (1024, 2048, 4096, 8192, 16384)


def cached_threads(tile: int) -> int:
    """Threads per row for a cached tile: VALUES_PER_THREAD each, 128..1024 threads. (32 values per
    thread measured 0.63x of our CUDA kernel at 8192x8192 on the H200: 112 registers, 2 blocks per
    SM; 32768 in one block spilled.)"""
    return min(1024, max(128, tile // VALUES_PER_THREAD))


# packed strategy: rows up to 256 in blocks of 256 threads, `lanes` threads per row holding 8 values
# each (tile = 8 * lanes), the fewest lanes whose tile holds the row: a warp per row of 20 left 12
# of its lanes and 7 of each lane's 8 values idle, one 80-byte row per warp in flight (softmax of
# short rows ran at 0.41-0.73x torch on the H200). (tile, lanes) per longest row; reasoned, timed
# by scripts/tilelang_tune.py. Rows of 257..1024 keep the 1024 tile of 128 threads, 1.34x torch at
# 4096x1024.
PACKED = ((32, 4), (64, 8), (128, 16), (256, 32))
PACKED_TILE, PACKED_THREADS = PACKED[-1][0], 256

GPU_VARIANTS = ([("packed", tile, lanes) for tile, lanes in PACKED] + [("cached", tile) for tile in CACHED_TILES]
                + [("online", ONLINE_THREADS)])  # what gpu_strategy picks


def gpu_strategy(row_len: int) -> tuple:
    """("packed", tile, lanes) for short rows, ("cached", TILE) for the smallest tile holding the
    row, else ("online", threads)."""
    for tile, lanes in PACKED:
        if row_len <= tile:
            return "packed", tile, lanes
    for tile in CACHED_TILES:
        if row_len <= tile:
            return "cached", tile
    return "online", ONLINE_THREADS


def softmax_program(dtype: str, gpu: bool, strategy: str = "cached", size: int = 1024, lanes: int = 32):
    """size: the tile (cached, packed) or the threads per row (online); lanes: threads per row (packed)."""
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    if not gpu:
        return _softmax_cpu(dtype, rows, row_len)
    if strategy == "packed":
        return _softmax_packed(dtype, rows, row_len, size, lanes)
    if strategy == "cached":
        return _softmax_cached(dtype, rows, row_len, size)
    return _softmax_online(dtype, rows, row_len, size)


def _softmax_cached(dtype, rows, row_len, TILE):
    @T.prim_func
    def softmax_cached(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows, row_len), dtype)):
        with T.Kernel(rows, threads=cached_threads(TILE)) as row:
            x = T.alloc_fragment((TILE,), "float32")
            row_max = T.alloc_fragment((1,), "float32")
            row_sum = T.alloc_fragment((1,), "float32")
            for j in T.Parallel(TILE):
                x[j] = T.if_then_else(j < row_len, T.cast(X[row, j], "float32"), LOWEST)
            T.reduce_max(x, row_max, dim=0)
            for j in T.Parallel(TILE):  # padding contributes exactly 0 to the sum
                x[j] = T.if_then_else(j < row_len, T.exp(x[j] - row_max[0]), 0.0)
            T.reduce_sum(x, row_sum, dim=0)
            for j in T.Parallel(TILE):
                if j < row_len:
                    Y[row, j] = T.cast(x[j] / row_sum[0], dtype)

    return softmax_cached


def _softmax_packed(dtype, rows, row_len, TILE, LANES):
    if LANES not in (1, 2, 4, 8, 16, 32) or TILE % LANES:
        raise ValueError(f"packed rows take 1..32 lanes (a power of two) dividing the tile; got {LANES}, tile {TILE}")
    R, V = PACKED_THREADS // LANES, TILE // LANES  # rows per block, values per thread

    @T.prim_func
    def softmax_packed(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows, row_len), dtype)):
        with T.Kernel(T.ceildiv(rows, R), threads=PACKED_THREADS) as bx:
            # loop order (v, r, lane), fragment to match: thread r * LANES + lane holds x[:, r, lane]
            x = T.alloc_fragment((V, R, LANES), "float32")
            lane_stat = T.alloc_fragment((R, LANES), "float32")
            row_max = T.alloc_fragment((R,), "float32")
            row_sum = T.alloc_fragment((R,), "float32")
            for v, r, lane in T.Parallel(V, R, LANES):
                # padding, and the last block's rows past `rows`, load nothing
                x[v, r, lane] = T.if_then_else(v * LANES + lane < row_len and bx * R + r < rows,
                                               T.cast(X[bx * R + r, v * LANES + lane], "float32"), LOWEST)
            T.reduce_max(x, lane_stat, dim=0)   # within each thread
            T.reduce_max(lane_stat, row_max, dim=1)  # across the row's lanes: a warp shuffle
            for v, r, lane in T.Parallel(V, R, LANES):  # padding contributes exactly 0 to the sum
                x[v, r, lane] = T.if_then_else(v * LANES + lane < row_len, T.exp(x[v, r, lane] - row_max[r]), 0.0)
            T.reduce_sum(x, lane_stat, dim=0)
            T.reduce_sum(lane_stat, row_sum, dim=1)
            for v, r, lane in T.Parallel(V, R, LANES):
                if v * LANES + lane < row_len and bx * R + r < rows:
                    Y[bx * R + r, v * LANES + lane] = T.cast(x[v, r, lane] / row_sum[r], dtype)

    return softmax_packed


def _softmax_online(dtype, rows, row_len, THREADS):
    CHUNK = THREADS * UNROLL

    @T.prim_func
    def softmax_online(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows, row_len), dtype)):
        with T.Kernel(rows, threads=THREADS) as row:
            x = T.alloc_fragment((THREADS, UNROLL), "float32")  # UNROLL adjacent values per thread
            x_max = T.alloc_fragment((THREADS,), "float32")
            m = T.alloc_fragment((THREADS,), "float32")   # each thread's running max ...
            s = T.alloc_fragment((THREADS,), "float32")   # ... and its sum of exp(x - m)
            row_max = T.alloc_fragment((1,), "float32")
            row_sum = T.alloc_fragment((1,), "float32")
            T.fill(m, LOWEST)
            T.clear(s)
            for k in T.serial(T.ceildiv(row_len, CHUNK)):
                for t, u in T.Parallel(THREADS, UNROLL):
                    j = k * CHUNK + t * UNROLL + u
                    x[t, u] = T.if_then_else(j < row_len, T.cast(X[row, j], "float32"), LOWEST)
                T.reduce_max(x, x_max, dim=1)
                for t in T.Parallel(THREADS):  # rescale once per chunk, not once per element
                    x_max[t] = T.max(x_max[t], m[t])
                    s[t] = s[t] * T.exp(m[t] - x_max[t])
                    m[t] = x_max[t]
                for t, u in T.Parallel(THREADS, UNROLL):
                    x[t, u] = T.if_then_else(k * CHUNK + t * UNROLL + u < row_len, T.exp(x[t, u] - m[t]), 0.0)
                T.reduce_sum(x, s, dim=1, clear=False)
            T.reduce_max(m, row_max, dim=0)
            for t in T.Parallel(THREADS):  # bring every thread's sum to the row's max
                s[t] = s[t] * T.exp(m[t] - row_max[0])
            T.reduce_sum(s, row_sum, dim=0)
            for k in T.serial(T.ceildiv(row_len, CHUNK)):
                for t, u in T.Parallel(THREADS, UNROLL):
                    j = k * CHUNK + t * UNROLL + u
                    if j < row_len:
                        Y[row, j] = T.cast(T.exp(T.cast(X[row, j], "float32") - row_max[0]) / row_sum[0], dtype)

    return softmax_online


# On the C target one program walks a whole row: its sum of exp(x - max) is a serial sum of up to
# row_len terms, which in float32 drifted past the f32 tolerance (3.4e-6 relative for a 4096-long
# row of randn * 10, tests/runtime/test_plan_cache.py). The sum is kept in float64 there (the GPU kernels
# sum per thread, then in a tree, so no one running sum gets long).
SUM_DTYPE_CPU = "float64"


def _softmax_cpu(dtype, rows, row_len):
    stored = storage(dtype, False)

    @T.prim_func
    def softmax_cpu(X: T.Tensor((rows, row_len), stored), Y: T.Tensor((rows, row_len), stored)):
        with T.Kernel(rows) as row:
            stat = T.alloc_local((2,), "float32")  # the row's max, then its sum
            total = T.alloc_local((1,), SUM_DTYPE_CPU)
            stat[0] = LOWEST
            for j in T.serial(row_len):
                stat[0] = T.max(stat[0], load(X[row, j], dtype, False))
            total[0] = 0.0
            for j in T.serial(row_len):
                total[0] += T.cast(T.exp(load(X[row, j], dtype, False) - stat[0]), "float64")
            stat[1] = T.cast(total[0], "float32")
            for j in T.serial(row_len):
                Y[row, j] = store(T.exp(load(X[row, j], dtype, False) - stat[0]) / stat[1], dtype, False)

    return softmax_cpu


# Column softmax on the GPU (softmax_columns_program): a contiguous input over a dim that is not
# innermost, viewed as (outer, L, inner): the softmax runs down each column (o, :, c). The strided
# kernel's one thread per column gave few blocks when columns are few (8192 columns: 32 blocks),
# each thread walking its column three times. Here a block takes STRIP adjacent columns of one `o`
# and SWEEP rows per step, UNROLL steps' rows in flight: thread (r, c) reads rows r, r + SWEEP, ...
# of column c, so a warp reads STRIP adjacent values of one row. One pass keeps each thread's
# running (max, sum) as the online kernel does, the block merges its SWEEP pairs per column, and a
# second pass writes.
STRIP, SWEEP = 32, 16  # 512 threads: 16 rows x 32 columns, UNROLL rows each per step


def softmax_columns_program(dtype: str, gpu: bool):
    outer, L, inner = T.dynamic("outer", "int64"), T.dynamic("L", "int64"), T.dynamic("inner", "int64")
    if not gpu:
        raise ValueError("softmax_columns_program is a GPU kernel: the C target takes softmax_strided_program")
    STEP = SWEEP * UNROLL  # rows the block loads per step

    @T.prim_func
    def softmax_columns(X: T.Tensor((outer, L, inner), dtype), Y: T.Tensor((outer, L, inner), dtype)):
        strips = T.ceildiv(inner, STRIP)
        with T.Kernel(strips * outer, threads=STRIP * SWEEP) as b:
            where = T.alloc_local((2,), "int64")  # (o, first column): divided once, not per load
            where[0] = b // strips
            where[1] = b % strips * STRIP
            o, col0 = where[0], where[1]
            # loop order (u, r, c), fragment to match: thread r * STRIP + c holds x[:, r, c]
            x = T.alloc_fragment((UNROLL, SWEEP, STRIP), "float32")
            x_max = T.alloc_fragment((SWEEP, STRIP), "float32")
            m = T.alloc_fragment((SWEEP, STRIP), "float32")  # each thread's running max ...
            s = T.alloc_fragment((SWEEP, STRIP), "float32")  # ... and its sum of exp(x - m)
            col_max = T.alloc_fragment((STRIP,), "float32")
            col_sum = T.alloc_fragment((STRIP,), "float32")
            T.fill(m, LOWEST)
            T.clear(s)
            for k in T.serial(T.ceildiv(L, STEP)):
                for u, r, c in T.Parallel(UNROLL, SWEEP, STRIP):
                    i = k * STEP + u * SWEEP + r
                    x[u, r, c] = T.if_then_else(i < L and col0 + c < inner, T.cast(X[o, i, col0 + c], "float32"),
                                                LOWEST)
                T.reduce_max(x, x_max, dim=0)  # within each thread
                for r, c in T.Parallel(SWEEP, STRIP):  # rescale once per step, not once per element
                    x_max[r, c] = T.max(x_max[r, c], m[r, c])
                    s[r, c] = s[r, c] * T.exp(m[r, c] - x_max[r, c])
                    m[r, c] = x_max[r, c]
                for u, r, c in T.Parallel(UNROLL, SWEEP, STRIP):  # rows past L add exactly 0
                    x[u, r, c] = T.if_then_else(k * STEP + u * SWEEP + r < L, T.exp(x[u, r, c] - m[r, c]), 0.0)
                T.reduce_sum(x, s, dim=0, clear=False)
            T.reduce_max(m, col_max, dim=0)  # across the SWEEP threads of each column
            for r, c in T.Parallel(SWEEP, STRIP):  # bring every thread's sum to its column's max
                s[r, c] = s[r, c] * T.exp(m[r, c] - col_max[c])
            T.reduce_sum(s, col_sum, dim=0)
            for k in T.serial(T.ceildiv(L, STEP)):
                for u, r, c in T.Parallel(UNROLL, SWEEP, STRIP):
                    i = k * STEP + u * SWEEP + r
                    if i < L and col0 + c < inner:
                        e = T.exp(T.cast(X[o, i, col0 + c], "float32") - col_max[c])
                        Y[o, i, col0 + c] = T.cast(e / col_sum[c], dtype)

    return softmax_columns


# The strided kernel: one thread per softmax row, this many per GPU block.
STRIDED_THREADS = 256


def softmax_strided_program(dtype: str, gpu: bool, rank: int):
    """Softmax over L elements X[x(o) + r * sx], written to Y[y(o) + r * sy], for the n rows o.
    M: the sizes of the other dims, then the input's and out's strides over them (rank each)."""
    nx, ny = T.dynamic("nx", "int64"), T.dynamic("ny", "int64")
    stored = storage(dtype, gpu)
    if gpu:
        @T.prim_func
        def softmax_strided(X: T.Tensor((nx,), stored), Y: T.Tensor((ny,), stored), M: T.Tensor((3 * rank,), "int64"),
                            n: T.int64, L: T.int64, sx: T.int64, sy: T.int64):
            with T.Kernel(T.ceildiv(n, STRIDED_THREADS), threads=STRIDED_THREADS) as bx:
                m = T.alloc_fragment((STRIDED_THREADS,), "float32")
                s = T.alloc_fragment((STRIDED_THREADS,), "float32")
                xo = T.alloc_fragment((STRIDED_THREADS,), "int64")
                yo = T.alloc_fragment((STRIDED_THREADS,), "int64")
                for i in T.Parallel(STRIDED_THREADS):
                    m[i] = LOWEST
                    s[i] = 0.0
                    xo[i], yo[i] = offsets(T.min(bx * STRIDED_THREADS + i, n - 1), M, rank, 2)
                for r in T.serial(L):
                    for i in T.Parallel(STRIDED_THREADS):
                        if bx * STRIDED_THREADS + i < n:
                            m[i] = T.max(m[i], load(X[xo[i] + r * sx], dtype, gpu))
                for r in T.serial(L):
                    for i in T.Parallel(STRIDED_THREADS):
                        if bx * STRIDED_THREADS + i < n:
                            s[i] += T.exp(load(X[xo[i] + r * sx], dtype, gpu) - m[i])
                for r in T.serial(L):
                    for i in T.Parallel(STRIDED_THREADS):
                        if bx * STRIDED_THREADS + i < n:
                            Y[yo[i] + r * sy] = store(T.exp(load(X[xo[i] + r * sx], dtype, gpu) - m[i]) / s[i],
                                                      dtype, gpu)

        return softmax_strided

    @T.prim_func
    def softmax_strided_cpu(X: T.Tensor((nx,), stored), Y: T.Tensor((ny,), stored), M: T.Tensor((3 * rank,), "int64"),
                            n: T.int64, L: T.int64, sx: T.int64, sy: T.int64):
        with T.Kernel(n) as o:
            stat = T.alloc_local((2,), "float32")  # the row's max, then its sum
            total = T.alloc_local((1,), SUM_DTYPE_CPU)
            x, y = offsets(o, M, rank, 2)
            stat[0] = LOWEST
            for r in T.serial(L):
                stat[0] = T.max(stat[0], load(X[x + r * sx], dtype, gpu))
            total[0] = 0.0
            for r in T.serial(L):
                total[0] += T.cast(T.exp(load(X[x + r * sx], dtype, gpu) - stat[0]), "float64")
            stat[1] = T.cast(total[0], "float32")
            for r in T.serial(L):
                Y[y + r * sy] = store(T.exp(load(X[x + r * sx], dtype, gpu) - stat[0]) / stat[1], dtype, gpu)

    return softmax_strided_cpu
