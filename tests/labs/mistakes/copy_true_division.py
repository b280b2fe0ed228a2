# what: the number of tiles computed with `/`: TileLang refuses the ambiguous integer division
# check: tilelang copy copy_program
# says: building the float32 program | line 7 of your cell | T.ceildiv(n, TILE)
def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE = 1024

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel((n + TILE - 1) / TILE, **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(TILE):
                if bx * TILE + i < n:
                    Y[bx * TILE + i] = X[bx * TILE + i]

    return copy
