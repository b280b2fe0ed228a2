"""Step 1: a tile of outputs per block, multiply-adds in T.Parallel.

A block owns a 32 x 32 tile of C in a float32 fragment (4 outputs for each of its 256 threads)
and walks K one element at a time: for each k, every output of the tile adds
A[row, k] * B[k, col], read straight from global memory. This is the naive kernel written with
tiles: each multiply-add loads two elements (the caches catch the reuse, if they can), and
nothing runs on the tensor cores. Reads past M or N give 0 (``T.if_then_else``) and the store is
guarded, so any M, N, K works; K = 0 stores the cleared tile.
"""

import tilelang.language as T

BM = BN = 32
THREADS = 256


def program(dtype: str, gpu: bool):
    M, N, K = T.dynamic("M", "int32"), T.dynamic("N", "int32"), T.dynamic("K", "int32")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def matmul_tile_loop(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), **launch) as (bx, by):
            acc = T.alloc_fragment((BM, BN), "float32")
            T.clear(acc)
            for p in T.serial(K):
                for i, j in T.Parallel(BM, BN):
                    row, col = by * BM + i, bx * BN + j
                    acc[i, j] += T.if_then_else(row < M and col < N,
                                                T.cast(A[row, p], "float32") * T.cast(B[p, col], "float32"), 0.0)
            for i, j in T.Parallel(BM, BN):
                if by * BM + i < M and bx * BN + j < N:
                    C[by * BM + i, bx * BN + j] = T.cast(acc[i, j], dtype)

    return matmul_tile_loop
