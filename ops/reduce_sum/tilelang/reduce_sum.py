"""reduce_sum in TileLang: Y = X summed over one dim, in float32.

Two kernels serve every dim and layout (the runtime picks, tilelang_backend.py):
- rows (``reduce_sum_program``): a contiguous input whose reduced dim is innermost, viewed as
  (rows, row_len). Both sizes are dynamic int64, so one compiled kernel serves every shape.
- columns (``reduce_sum_strided_program``): anything else. The input is viewed as (outer,
  reduce): ``outer`` runs over out's elements in any layout (sizes and strides in the int64
  tensor M, see operator_runtime/_internal/tilelang_prims.py), ``reduce`` is the summed dim
  with its own stride. Each GPU thread sums one output element serially; neighbouring threads
  take neighbouring outputs, so a sum over dim 0 of a row-major matrix reads contiguous spans.

Rows on the GPU: a block per row, its thread count picked by row length (``gpu_strategy``). Each step,
every thread loads `unroll` adjacent values (a warp reads one contiguous span) and adds them
into its partial sum; then the block combines the partial sums (T.reduce_sum over a
fragment lowers to a shuffle + shared-memory reduce).
Rows on the CPU (TileLang's C target has no fragments or block reductions): one program per
row walks it serially into a local float32 accumulator. bfloat16 there is stored as its
uint16 bits (``storage``/``load``/``store``).
"""

import tilelang.language as T

from operator_runtime._internal.tilelang_prims import load, offsets, storage, store

# (longest row, threads per row, values each thread loads per step), measured on the H200 with
# scripts/tilelang_tune.py. Each step keeps `unroll` loads in flight per thread; a few long rows
# need whole SMs of threads.
ROW_STRATEGY = ((2048, 128, 8), (32768, 256, 8), (None, 1024, 8))
GPU_VARIANTS = [(threads, unroll) for _, threads, unroll in ROW_STRATEGY]  # every kernel gpu_strategy picks


# Terms summed in float32 before the partial joins a float64 total: one long float32 running sum
# loses ~L ulps (7.6x torch's error at L = 100003, measured); CHUNK-term partials lose ~CHUNK, and
# the float64 total nothing more (the nvidia backend's column sums do the same)
CHUNK = 64


def gpu_strategy(row_len: int) -> tuple[int, int]:
    """(threads per row, unroll) for this row length: the runtime compiles one kernel per entry."""
    for longest, threads, unroll in ROW_STRATEGY:
        if longest is None or row_len <= longest:
            return threads, unroll


def reduce_sum_program(dtype: str, gpu: bool, threads: int = 256, unroll: int = 8):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    stored = storage(dtype, gpu)
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


COLUMNS = 256  # strided kernel: output elements (threads) per GPU block


def reduce_sum_strided_program(dtype: str, gpu: bool, rank: int):
    """Y[o] = sum over r < L of X[x(o) + r * sx], for the n outputs o. M: out's sizes, then the
    input's and out's strides over them (rank each); nx, ny: the buffers' extents."""
    nx, ny = T.dynamic("nx", "int64"), T.dynamic("ny", "int64")
    stored = storage(dtype, gpu)
    if gpu:
        @T.prim_func
        def reduce_sum_columns(X: T.Tensor((nx,), stored), Y: T.Tensor((ny,), stored), M: T.Tensor((3 * rank,), "int64"),
                               n: T.int64, L: T.int64, sx: T.int64):
            with T.Kernel(T.ceildiv(n, COLUMNS), threads=COLUMNS) as bx:
                total = T.alloc_fragment((COLUMNS,), "float64")
                part = T.alloc_fragment((COLUMNS,), "float32")
                xo = T.alloc_fragment((COLUMNS,), "int64")
                for i in T.Parallel(COLUMNS):
                    total[i] = 0.0
                    xo[i] = offsets(T.min(bx * COLUMNS + i, n - 1), M, rank, 2)[0]
                for c in T.serial(T.ceildiv(L, CHUNK)):
                    for i in T.Parallel(COLUMNS):
                        part[i] = 0.0
                    for r in T.serial(CHUNK):
                        for i in T.Parallel(COLUMNS):
                            if bx * COLUMNS + i < n and c * CHUNK + r < L:
                                part[i] += load(X[xo[i] + (c * CHUNK + r) * sx], dtype, gpu)
                    for i in T.Parallel(COLUMNS):
                        total[i] += T.cast(part[i], "float64")
                for i in T.Parallel(COLUMNS):
                    if bx * COLUMNS + i < n:
                        Y[offsets(bx * COLUMNS + i, M, rank, 2)[1]] = store(T.cast(total[i], "float32"), dtype, gpu)

        return reduce_sum_columns

    @T.prim_func
    def reduce_sum_columns_cpu(X: T.Tensor((nx,), stored), Y: T.Tensor((ny,), stored),
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

    return reduce_sum_columns_cpu
