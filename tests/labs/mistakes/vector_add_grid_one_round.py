# what: lab 2 Part 1 on its fixed grid without the rounds: BLOCKS programs add one tile each, the rest of C is never written
# check: tilelang vector_add vector_add_program
# says: shape (1048579,) float32 | never wrote them | T.ceildiv(n, BLOCKS * TILE) rounds
def vector_add_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE, BLOCKS = 1024, 256

    @T.prim_func
    def vector_add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(BLOCKS, **lab.launch(gpu, threads=256)) as bx:
            a = T.alloc_fragment((TILE,), "float32")
            b = T.alloc_fragment((TILE,), "float32")
            T.copy(A[bx * TILE], a)
            T.copy(B[bx * TILE], b)
            for i in T.Parallel(TILE):
                a[i] += b[i]
            T.copy(a, C[bx * TILE])

    return vector_add
