# what: TileLang matmul whose T.gemm accumulates in the input dtype: a float16 accumulator drifts over a long K
# check: tilelang matmul matmul_program
# says: float16 | T.gemm accumulates in its third argument's dtype
def matmul_program(dtype: str, gpu: bool):
    M, N, K = T.dynamic("M", "int32"), T.dynamic("N", "int32"), T.dynamic("K", "int32")
    BM, BN, BK = 64, 64, 32

    @T.prim_func
    def matmul(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), **lab.launch(gpu, threads=128)) as (bx, by):
            A_s = T.alloc_shared((BM, BK), dtype)
            B_s = T.alloc_shared((BK, BN), dtype)
            C_f = T.alloc_fragment((BM, BN), dtype)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, BK), num_stages=2):
                T.copy(A[by * BM, k * BK], A_s)
                T.copy(B[k * BK, bx * BN], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * BM, bx * BN])

    return matmul
