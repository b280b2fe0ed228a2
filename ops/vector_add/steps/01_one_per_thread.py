"""Step 1: one element per thread.

Thread ``i`` of a block adds element ``i`` of the block's span: a warp reads 32 neighbours of A
and of B (coalesced). The sum is taken in float32 and rounded once, as torch does for float16.
"""

import tilelang.language as T

THREADS = 256


def program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def vector_add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, THREADS), **launch) as bx:
            for i in T.Parallel(THREADS):
                j = bx * THREADS + i
                if j < n:
                    C[j] = T.cast(T.cast(A[j], "float32") + T.cast(B[j], "float32"), dtype)

    return vector_add
