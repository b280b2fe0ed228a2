"""Step 2: the online softmax: max and sum in one read pass.

Each thread keeps a running max ``m[t]`` and a sum ``s[t]`` of exp(x - m[t]). A value that
raises the max rescales the sum taken so far: s' = s * exp(m - m') + exp(x - m'). After the
row, the block takes the row's max, brings every thread's sum to it (s * exp(m[t] - max)) and
adds them. The write pass reads the row once more: two reads instead of three.
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
            x = T.alloc_fragment((THREADS,), "float32")
            top = T.alloc_fragment((THREADS,), "float32")
            m = T.alloc_fragment((THREADS,), "float32")
            s = T.alloc_fragment((THREADS,), "float32")
            row_max = T.alloc_fragment((1,), "float32")
            row_sum = T.alloc_fragment((1,), "float32")
            T.fill(m, LOWEST)
            T.clear(s)
            for k in T.serial(T.ceildiv(row_len, THREADS)):
                for t in T.Parallel(THREADS):
                    j = k * THREADS + t
                    x[t] = T.if_then_else(j < row_len, T.cast(X[row, j], "float32"), LOWEST)
                    top[t] = T.max(m[t], x[t])
                    s[t] = s[t] * T.exp(m[t] - top[t]) + T.if_then_else(j < row_len, T.exp(x[t] - top[t]), 0.0)
                    m[t] = top[t]
            T.reduce_max(m, row_max, dim=0)
            for t in T.Parallel(THREADS):  # every thread's sum, brought to the row's max
                s[t] = s[t] * T.exp(m[t] - row_max[0])
            T.reduce_sum(s, row_sum, dim=0)
            for k in T.serial(T.ceildiv(row_len, THREADS)):
                for t in T.Parallel(THREADS):
                    j = k * THREADS + t
                    if j < row_len:
                        Y[row, j] = T.cast(T.exp(T.cast(X[row, j], "float32") - row_max[0]) / row_sum[0], dtype)

    return softmax
