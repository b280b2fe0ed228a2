"""reduce_sum in TileLang: Y[r] = sum over the last dim of X[r, :], in float32.

The runtime views a contiguous input as (rows, row_len) and reduces the last dim; other
dims and layouts are refused by name (the CUDA and CPU backends run them). Both sizes
are dynamic int64, so one compiled kernel serves every shape.

GPU: a block per row, its thread count picked by row length (``gpu_strategy``). Each step,
every thread loads `unroll` adjacent values (a warp reads one contiguous span) and adds them
into its partial sum; then the block combines the partial sums (T.reduce_sum over a
fragment lowers to a shuffle + shared-memory reduce).
CPU (TileLang's C target has no fragments or block reductions): one program per row
walks it serially into a local float32 accumulator.
"""

import tilelang.language as T

# (longest row, threads per row, values each thread loads per step), measured on the H200 with
# scripts/tilelang_tune.py. Each step keeps `unroll` loads in flight per thread; a few long rows
# need whole SMs of threads.
ROW_STRATEGY = ((2048, 128, 8), (32768, 256, 8), (None, 1024, 8))
GPU_VARIANTS = [(threads, unroll) for _, threads, unroll in ROW_STRATEGY]  # every kernel gpu_strategy picks


def gpu_strategy(row_len: int) -> tuple[int, int]:
    """(threads per row, unroll) for this row length: the runtime compiles one kernel per entry."""
    for longest, threads, unroll in ROW_STRATEGY:
        if longest is None or row_len <= longest:
            return threads, unroll


def reduce_sum_program(dtype: str, gpu: bool, threads: int = 256, unroll: int = 8):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    if gpu:
        CHUNK = threads * unroll

        @T.prim_func
        def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
            with T.Kernel(rows, threads=threads) as row:
                x = T.alloc_fragment((threads, unroll), "float32")
                partial = T.alloc_fragment((threads,), "float32")
                total = T.alloc_fragment((1,), "float32")
                T.clear(partial)
                for k in T.serial(T.ceildiv(row_len, CHUNK)):
                    for t, u in T.Parallel(threads, unroll):
                        j = k * CHUNK + t * unroll + u
                        x[t, u] = T.if_then_else(j < row_len, T.cast(X[row, j], "float32"), 0.0)
                    T.reduce_sum(x, partial, dim=1, clear=False)  # within each thread: no communication
                T.reduce_sum(partial, total, dim=0)               # across the block
                Y[row] = T.cast(total[0], dtype)

        return reduce_sum

    @T.prim_func
    def reduce_sum_cpu(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows) as row:
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0.0
            for j in T.serial(row_len):
                acc[0] += T.cast(X[row, j], "float32")
            Y[row] = T.cast(acc[0], dtype)

    return reduce_sum_cpu
