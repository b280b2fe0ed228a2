"""Step 2: whole tiles through registers.

Each block moves a TILE of 8 elements per thread: ``T.copy`` loads the block's slices of A and B
into fragments (vector loads: a thread's elements are contiguous), ``T.Parallel`` adds them in
registers, and one more ``T.copy`` stores the tile (its tail guarded by ``T.copy``).
"""

import tilelang.language as T

THREADS, TILE = 256, 2048


def program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def vector_add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE), **launch) as bx:
            a = T.alloc_fragment((TILE,), dtype)
            b = T.alloc_fragment((TILE,), dtype)
            T.copy(A[bx * TILE], a)
            T.copy(B[bx * TILE], b)
            for i in T.Parallel(TILE):
                a[i] = T.cast(T.cast(a[i], "float32") + T.cast(b[i], "float32"), dtype)
            T.copy(a, C[bx * TILE])

    return vector_add
