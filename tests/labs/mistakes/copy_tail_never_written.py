# what: copy launching n // TILE blocks: the last partial tile is never written
# check: tilelang copy copy_program
# says: shape (1,) float32 | T.ceildiv
def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE = 1024

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(n // TILE, **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(TILE):
                Y[bx * TILE + i] = X[bx * TILE + i]

    return copy
