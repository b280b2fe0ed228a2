"""vector_add in TileLang: out = a + b for contiguous tensors of one shape and dtype.

Added in float32 and rounded once, as torch does for f16/bf16. One compiled kernel per
dtype and target serves every length (dynamic int64). Broadcasting is left to the CUDA
and CPU backends; the TileLang backend refuses it by name.
"""

import tilelang.language as T

BLOCK = 1024
THREADS = 256


def vector_add_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def vector_add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, BLOCK), **launch) as bx:
            for i in T.Parallel(BLOCK):
                if bx * BLOCK + i < n:
                    C[bx * BLOCK + i] = T.cast(
                        T.cast(A[bx * BLOCK + i], "float32") + T.cast(B[bx * BLOCK + i], "float32"), dtype)

    return vector_add
