"""vector_add in TileLang: out = a + b.

Added in float32 and rounded once, as torch does for f16/bf16. One compiled kernel per
dtype and target serves every length (dynamic int64).

``vector_add_program`` takes contiguous tensors of one shape (flat). ``vector_add_strided_program``
takes any layout: broadcasting (a and b expanded to out's shape: stride 0 on the broadcast dims),
transposed, sliced or expanded inputs and a strided out, each a flat buffer from its data
pointer, with sizes and strides in the int64 tensor M (operator_runtime/_internal/tilelang_prims.py).
bfloat16 on the C target is stored as its uint16 bits and converted in the kernel.
"""

import tilelang.language as T

from operator_runtime._internal.tilelang_prims import load, offsets, storage, store

BLOCK = 1024
THREADS = 256


def vector_add_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    launch = dict(threads=THREADS) if gpu else {}
    stored = storage(dtype, gpu)

    @T.prim_func
    def vector_add(A: T.Tensor((n,), stored), B: T.Tensor((n,), stored), C: T.Tensor((n,), stored)):
        with T.Kernel(T.ceildiv(n, BLOCK), **launch) as bx:
            for i in T.Parallel(BLOCK):
                if bx * BLOCK + i < n:
                    C[bx * BLOCK + i] = store(
                        load(A[bx * BLOCK + i], dtype, gpu) + load(B[bx * BLOCK + i], dtype, gpu), dtype, gpu)

    return vector_add


def vector_add_strided_program(dtype: str, gpu: bool, rank: int):
    """C[i] = A[i] + B[i] over out's n elements; M = sizes, then a's, b's and out's strides.
    na, nb, nc: each buffer's extent (the last element any offset reaches, plus one)."""
    na, nb, nc = T.dynamic("na", "int64"), T.dynamic("nb", "int64"), T.dynamic("nc", "int64")
    launch = dict(threads=THREADS) if gpu else {}
    stored = storage(dtype, gpu)

    @T.prim_func
    def vector_add_strided(A: T.Tensor((na,), stored), B: T.Tensor((nb,), stored), C: T.Tensor((nc,), stored),
                           M: T.Tensor((4 * rank,), "int64"), n: T.int64):
        with T.Kernel(T.ceildiv(n, BLOCK), **launch) as bx:
            for i in T.Parallel(BLOCK):
                if bx * BLOCK + i < n:
                    a, b, c = offsets(bx * BLOCK + i, M, rank, 3)
                    C[c] = store(load(A[a], dtype, gpu) + load(B[b], dtype, gpu), dtype, gpu)

    return vector_add_strided
