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


# Rows shorter than this keep the strided kernel: a block per (row, BLOCK columns) would leave most
# of its threads idle (a million rows of 2 would be a million blocks of 2 busy threads)
BROADCAST_MIN_COLUMNS = BLOCK // 4


def vector_add_broadcast_program(dtype: str, gpu: bool, a_inner: int, b_inner: int):
    """C[r, j] = A[r * ra + j * a_inner] + B[r * rb + j * b_inner] over out's (R, Cn) elements, out's
    rows rc apart and its columns adjacent; a_inner, b_inner (compiled in): 1 where the operand's
    columns are adjacent, 0 where it repeats one value along the row. The layouts users broadcast
    most coalesce to this: a bias row over a matrix (b_inner 1, rb 0), a column of per-row values
    (b_inner 0, rb 1) and a scalar-like operand (R = 1, b_inner 0), for rows of at least
    BROADCAST_MIN_COLUMNS (a transposed operand, its columns a row apart, takes the strided kernel). A
    block takes BLOCK columns of one row, so the row and column come from one division per block;
    the strided kernel divides every element's index by every size (a bf16 row-vector add of
    1921 x 10853 ran at 0.45x torch on an H100 through it)."""
    na, nb, nc = T.dynamic("na", "int64"), T.dynamic("nb", "int64"), T.dynamic("nc", "int64")
    launch = dict(threads=THREADS) if gpu else {}
    stored = storage(dtype, gpu)

    @T.prim_func
    def vector_add_broadcast(A: T.Tensor((na,), stored), B: T.Tensor((nb,), stored), C: T.Tensor((nc,), stored),
                             R: T.int64, Cn: T.int64, ra: T.int64, rb: T.int64, rc: T.int64):
        tiles = T.ceildiv(Cn, BLOCK)
        with T.Kernel(tiles * R, **launch) as b:
            where = T.alloc_local((2,), "int64")  # (row, first column): divided once per block
            where[0] = b // tiles
            where[1] = b % tiles * BLOCK
            row, col0 = where[0], where[1]
            for i in T.Parallel(BLOCK):
                if col0 + i < Cn:
                    C[row * rc + col0 + i] = store(load(A[row * ra + (col0 + i) * a_inner], dtype, gpu)
                                                   + load(B[row * rb + (col0 + i) * b_inner], dtype, gpu), dtype, gpu)

    return vector_add_broadcast
