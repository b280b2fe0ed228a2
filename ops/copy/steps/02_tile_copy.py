"""Step 2: whole tiles with ``T.copy``.

A block of THREADS threads now moves a TILE of 8 elements per thread: ``T.copy`` brings the
block's slice of X into a register fragment and writes it back to Y. TileLang lays the fragment
out over the threads and, since each thread's elements are contiguous, emits vector loads and
stores (16 bytes for float32); ``T.copy`` guards the tail itself. Fewer, fuller blocks: the
tile-level version of CUDA steps 2 and 3.
"""

import tilelang.language as T

THREADS, TILE = 256, 2048  # 8 elements per thread


def program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE), **launch) as bx:
            tile = T.alloc_fragment((TILE,), dtype)
            T.copy(X[bx * TILE], tile)
            T.copy(tile, Y[bx * TILE])

    return copy
