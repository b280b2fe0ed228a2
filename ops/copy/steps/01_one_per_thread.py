"""Step 1: one element per thread.

Each block owns THREADS elements and has THREADS threads: ``T.Parallel(THREADS)`` hands element
``i`` of the block's span to thread ``i``, so a warp reads 32 neighbours (coalesced). As in the
CUDA step, every thread moves one element and is done: many small blocks, little work each.
The ``if`` guards the last block's tail. On the CPU (target "c") the grid is an outer loop.
"""

import tilelang.language as T

THREADS = 256


def program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, THREADS), **launch) as bx:
            for i in T.Parallel(THREADS):
                if bx * THREADS + i < n:
                    Y[bx * THREADS + i] = X[bx * THREADS + i]

    return copy
