# what: lab 2 Part 1 whose rounds step by one tile instead of the grid's BLOCKS tiles: blocks redo their neighbours' tiles and the end of C is never written
# check: tilelang vector_add vector_add_program
# says: shape (1048579,) float32 | never wrote them | T.ceildiv(n, BLOCKS * TILE) rounds | Smaller inputs passed: (1023,) float32
def vector_add_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE, BLOCKS = 1024, 256

    @T.prim_func
    def vector_add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(BLOCKS, **lab.launch(gpu, threads=256)) as bx:
            a = T.alloc_fragment((TILE,), "float32")
            b = T.alloc_fragment((TILE,), "float32")
            for k in T.serial(T.ceildiv(n, BLOCKS * TILE)):
                first = (bx + k) * TILE
                T.copy(A[first], a)
                T.copy(B[first], b)
                for i in T.Parallel(TILE):
                    a[i] += b[i]
                T.copy(a, C[first])

    return vector_add
