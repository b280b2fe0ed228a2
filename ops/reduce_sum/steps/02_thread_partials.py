"""Step 2: private partial sums, one block reduction at the end.

Each thread keeps its own running sum (``partial[t]``, a register) and adds its column of every
tile to it: no communication inside the loop at all. The block combines the THREADS partial
sums once, after the row, with one ``T.reduce_sum``: the tile-level version of CUDA step 2/3.
"""

import tilelang.language as T

THREADS = 256


def program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, **launch) as row:
            partial = T.alloc_fragment((THREADS,), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(partial)
            for k in T.serial(T.ceildiv(row_len, THREADS)):
                for t in T.Parallel(THREADS):
                    j = k * THREADS + t
                    partial[t] += T.if_then_else(j < row_len, T.cast(X[row, j], "float32"), 0.0)
            T.reduce_sum(partial, total, dim=0)  # once per row
            Y[row] = T.cast(total[0], dtype)

    return reduce_sum
