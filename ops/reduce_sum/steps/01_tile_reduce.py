"""Step 1: a block-wide reduction for every tile.

A block per row: it loads the row THREADS values at a time into a fragment (one per thread,
coalesced) and adds the tile into the row's total with ``T.reduce_sum(..., clear=False)``.
Simple, but every tile pays a whole block reduction (shuffles, shared memory, barriers) to
add just THREADS values.
"""

import tilelang.language as T

THREADS = 256


def program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, **launch) as row:
            tile = T.alloc_fragment((THREADS,), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(total)
            for k in T.serial(T.ceildiv(row_len, THREADS)):
                for t in T.Parallel(THREADS):
                    j = k * THREADS + t
                    tile[t] = T.if_then_else(j < row_len, T.cast(X[row, j], "float32"), 0.0)
                T.reduce_sum(tile, total, dim=0, clear=False)  # a block-wide combine per tile
            Y[row] = T.cast(total[0], dtype)

    return reduce_sum
