# what: lab 1 Part 1 with the block's k-th tile at bx + k (not bx * STEPS + k): blocks copy their neighbours' tiles and the end of Y is never written
# check: tilelang copy copy_program
# says: never wrote them | Only the tail is wrong | tile bx * STEPS + k
def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE, STEPS = 1024, 4

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, STEPS * TILE), **lab.launch(gpu, threads=256)) as bx:
            tile = T.alloc_fragment((TILE,), dtype)
            for k in T.serial(STEPS):
                T.copy(X[(bx + k) * TILE], tile)
                T.copy(tile, Y[(bx + k) * TILE])

    return copy
