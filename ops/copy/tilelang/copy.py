"""copy in TileLang, in the two styles the course teaches.

Eager (puzzle style): the kernel allocates its output with ``T.empty`` and returns it;
calling the decorated function compiles (once per signature) and runs it. Good for
exploring, but it cannot write into a tensor the caller owns, so ``out=`` is impossible.

Lazy (factory style): ``copy_program(...)`` returns a ``T.prim_func`` with the output
as a parameter. The runtime compiles it once per dtype pair and target and launches it
on the caller's tensors: ``out=`` writes in place, prepared execution holds the kernel.
(``tilelang.jit(out_idx=[-1])`` would allocate the output instead: fine for a puzzle,
wrong for ``out=``.)

The length is a dynamic int64, so one compiled kernel serves every size (2^31 and up).
On a GPU each block copies BLOCK elements with THREADS threads; on the CPU (target
"c") the grid becomes an outer loop and ``T.Parallel`` a serial inner loop.

``copy_strided_program`` is the same loop over out's elements in any layout: input and out
are flat buffers from their data pointers, and each element's offsets come from sizes and
strides passed in the int64 tensor M (stride 0 for a broadcast dim); see
operator_runtime/_internal/tilelang_prims.py. bfloat16 on the C target is stored as its
uint16 bits and converted in the kernel (``convert``).
"""

import tilelang
import tilelang.language as T

from operator_runtime._internal.tilelang_prims import convert, offsets, storage

BLOCK = 1024   # elements per block (GPU) or per outer-loop step (CPU)
THREADS = 256  # GPU threads per block: 4 elements each


def copy_program(in_dtype: str, out_dtype: str, gpu: bool, block: int = BLOCK):
    """block: elements per block; scripts/elementwise_sweep.py times other values on the GPU."""
    n = T.dynamic("n", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def copy(X: T.Tensor((n,), storage(in_dtype, gpu)), Y: T.Tensor((n,), storage(out_dtype, gpu))):
        with T.Kernel(T.ceildiv(n, block), **launch) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    Y[bx * block + i] = convert(X[bx * block + i], in_dtype, out_dtype, gpu)

    return copy


ALIGNED_BLOCK = 4096  # elements per block of copy_aligned_program (GPU)


def copy_aligned_program(in_dtype: str, out_dtype: str, gpu: bool, block: int = ALIGNED_BLOCK):
    """copy_program for X and Y whose data start on a 16-byte boundary (the runtime checks the
    pointers on every call and runs copy_program otherwise: tilelang_backend.AlignedPlan). Every
    block but the last is whole, so its loop has no bounds check and TileLang vectorizes it into
    16-byte loads and stores (float4 for float32: copy_program's guarded loop stays one element
    at a time, 0.81-0.93x torch at 2^28 on the H200); the last block checks each element."""
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy_aligned(X: T.Tensor((n,), storage(in_dtype, gpu)), Y: T.Tensor((n,), storage(out_dtype, gpu))):
        with T.Kernel(T.ceildiv(n, block), threads=THREADS) as bx:
            if (bx + 1) * block <= n:
                for i in T.Parallel(block):
                    Y[bx * block + i] = convert(X[bx * block + i], in_dtype, out_dtype, gpu)
            else:
                for i in T.Parallel(block):
                    if bx * block + i < n:
                        Y[bx * block + i] = convert(X[bx * block + i], in_dtype, out_dtype, gpu)

    return copy_aligned


def copy_strided_program(in_dtype: str, out_dtype: str, gpu: bool, rank: int):
    """Y[i] = X[i] over out's n elements; offsets from M = sizes, input strides, out strides.
    nx, ny: each buffer's extent (the last element any offset reaches, plus one)."""
    nx, ny = T.dynamic("nx", "int64"), T.dynamic("ny", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def copy_strided(X: T.Tensor((nx,), storage(in_dtype, gpu)), Y: T.Tensor((ny,), storage(out_dtype, gpu)),
                     M: T.Tensor((3 * rank,), "int64"), n: T.int64):
        with T.Kernel(T.ceildiv(n, BLOCK), **launch) as bx:
            for i in T.Parallel(BLOCK):
                if bx * BLOCK + i < n:
                    x, y = offsets(bx * BLOCK + i, M, rank, 2)
                    Y[y] = convert(X[x], in_dtype, out_dtype, gpu)

    return copy_strided


@tilelang.jit(target="c")
def copy_eager_cpu(X: T.Tensor((T.dynamic("n", "int64"),), "float32")):
    """The puzzle version: float32 in, a new float32 tensor out (CPU target)."""
    n = X.shape[0]
    Y = T.empty((n,), "float32")
    with T.Kernel(T.ceildiv(n, BLOCK)) as bx:
        for i in T.Parallel(BLOCK):
            if bx * BLOCK + i < n:
                Y[bx * BLOCK + i] = X[bx * BLOCK + i]
    return Y
