"""Step 2: shared tiles multiplied by T.gemm.

The tiled GEMM: a block owns a 128 x 128 tile of C in a float32 fragment; K is walked 32 at a
time, the block's threads load A's 128 x 32 tile and B's 32 x 128 tile into shared memory
(``T.Parallel`` loads, 0 past M, N or K) and ``T.gemm`` multiplies them into the fragment. On a
GPU T.gemm is the tensor cores (``mma.sync`` on sm_80, ``wgmma`` on sm_90), with the warp layout
and the shared-memory loads TileLang picks. Each loop iteration loads and then multiplies: the
tensor cores wait for every load. The production kernel adds ``T.copy`` (TMA on sm_90) and
``T.Pipelined``, which overlaps the loads of the next tiles with this one's gemm.
"""

import tilelang.language as T

BM, BN, BK = 128, 128, 32
THREADS = 128


def program(dtype: str, gpu: bool):
    M, N, K = T.dynamic("M", "int32"), T.dynamic("N", "int32"), T.dynamic("K", "int32")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def matmul_gemm_shared(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), **launch) as (bx, by):
            a_tile = T.alloc_shared((BM, BK), dtype)
            b_tile = T.alloc_shared((BK, BN), dtype)
            acc = T.alloc_fragment((BM, BN), "float32")
            T.clear(acc)
            for ko in T.serial(T.ceildiv(K, BK)):
                for i, kk in T.Parallel(BM, BK):
                    a_tile[i, kk] = T.if_then_else(by * BM + i < M and ko * BK + kk < K,
                                                   A[by * BM + i, ko * BK + kk], T.cast(0, dtype))
                for kk, j in T.Parallel(BK, BN):
                    b_tile[kk, j] = T.if_then_else(ko * BK + kk < K and bx * BN + j < N,
                                                   B[ko * BK + kk, bx * BN + j], T.cast(0, dtype))
                T.gemm(a_tile, b_tile, acc)
            for i, j in T.Parallel(BM, BN):
                if by * BM + i < M and bx * BN + j < N:
                    C[by * BM + i, bx * BN + j] = T.cast(acc[i, j], dtype)

    return matmul_gemm_shared
