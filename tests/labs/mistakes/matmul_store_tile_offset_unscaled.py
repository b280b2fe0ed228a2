# what: TileLang matmul that stores its tile at C[by, bx] instead of C[by * BM, bx * BN]: right while C is one tile (a blind student's; it was told the K loop loses a tile, then, with the blocks run last to first, that the edge tile is partial); neighbouring blocks store overlapping tiles, refused by name
# check: tilelang matmul matmul_program
# says: overlapping tiles of C | C[by, bx] moves by (1, 0) | [by * BM, bx * BN]
def matmul_program(dtype: str, gpu: bool):
    """C = A @ B: a block per BM x BN tile of C, K walked BK at a time, sums in float32."""
    M, N, K = T.dynamic("M", "int32"), T.dynamic("N", "int32"), T.dynamic("K", "int32")
    BM, BN, BK = 64, 64, 32

    @T.prim_func
    def matmul(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            a_tile = T.alloc_shared((BM, BK), dtype)
            b_tile = T.alloc_shared((BK, BN), dtype)
            acc = T.alloc_fragment((BM, BN), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, BK), num_stages=2):
                T.copy(A[by * BM, ko * BK], a_tile)
                T.copy(B[ko * BK, bx * BN], b_tile)
                T.gemm(a_tile, b_tile, acc)
            T.copy(acc, C[by, bx])

    return matmul
