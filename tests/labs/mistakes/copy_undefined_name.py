# what: a typo in a name the program uses (TILES for TILE)
# check: tilelang copy copy_program
# says: line 7 of your cell | NameError: name 'TILES' is not defined | define it in the cell
def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE = 1024

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILES), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(TILE):
                if bx * TILE + i < n:
                    Y[bx * TILE + i] = X[bx * TILE + i]

    return copy
