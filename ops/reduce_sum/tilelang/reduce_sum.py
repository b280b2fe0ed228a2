"""reduce_sum in TileLang: Y[r] = sum over the last dim of X[r, :], in float32.

The runtime views a contiguous input as (rows, row_len) and reduces the last dim; other
dims and layouts are refused by name (the CUDA and CPU backends run them). Both sizes
are dynamic int64, so one compiled kernel serves every shape.

GPU: a block of THREADS threads per row. Each thread adds every THREADS-th element
(adjacent threads read adjacent elements: coalesced), then the block combines the
partial sums (T.reduce_sum over a fragment lowers to a shuffle + shared-memory reduce).
CPU (TileLang's C target has no fragments or block reductions): one program per row
walks it serially into a local float32 accumulator.
"""

import tilelang.language as T

THREADS = 256


def reduce_sum_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    if gpu:
        @T.prim_func
        def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
            with T.Kernel(rows, threads=THREADS) as row:
                partial = T.alloc_fragment((THREADS,), "float32")
                total = T.alloc_fragment((1,), "float32")
                T.clear(partial)
                for k in T.serial(T.ceildiv(row_len, THREADS)):
                    for t in T.Parallel(THREADS):
                        if k * THREADS + t < row_len:
                            partial[t] += T.cast(X[row, k * THREADS + t], "float32")
                T.reduce_sum(partial, total, dim=0)
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
