"""Step 1: three passes over the row.

A block per row, each thread a running statistic of its column of the row: pass 1 a max
(``T.reduce_max`` combines the threads' maxima), pass 2 a sum of exp(x - max), pass 3 writes
exp(x - max) / sum. Three reads of the row and one write. Maxima start at LOWEST (the lowest
finite float), never -inf, so a row of -inf gives exp(-inf - LOWEST) = 0 and then 0 / 0 = NaN,
as torch does, instead of exp(NaN) along the way.
"""

import tilelang.language as T

THREADS = 256
LOWEST = -3.4028234663852886e38


def program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def softmax(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows, row_len), dtype)):
        with T.Kernel(rows, **launch) as row:
            m = T.alloc_fragment((THREADS,), "float32")
            s = T.alloc_fragment((THREADS,), "float32")
            row_max = T.alloc_fragment((1,), "float32")
            row_sum = T.alloc_fragment((1,), "float32")
            T.fill(m, LOWEST)
            T.clear(s)
            for k in T.serial(T.ceildiv(row_len, THREADS)):  # pass 1: the max
                for t in T.Parallel(THREADS):
                    j = k * THREADS + t
                    m[t] = T.max(m[t], T.if_then_else(j < row_len, T.cast(X[row, j], "float32"), LOWEST))
            T.reduce_max(m, row_max, dim=0)
            for k in T.serial(T.ceildiv(row_len, THREADS)):  # pass 2: the sum against that max
                for t in T.Parallel(THREADS):
                    j = k * THREADS + t
                    s[t] += T.if_then_else(j < row_len, T.exp(T.cast(X[row, j], "float32") - row_max[0]), 0.0)
            T.reduce_sum(s, row_sum, dim=0)
            for k in T.serial(T.ceildiv(row_len, THREADS)):  # pass 3: write
                for t in T.Parallel(THREADS):
                    j = k * THREADS + t
                    if j < row_len:
                        Y[row, j] = T.cast(T.exp(T.cast(X[row, j], "float32") - row_max[0]) / row_sum[0], dtype)

    return softmax
