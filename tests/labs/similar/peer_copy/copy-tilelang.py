# your answer: the grader takes this cell from your notebook
def copy_program(dtype: str, gpu: bool):
    """Y[i] = X[i] for 0 <= i < n, STEPS tiles of TILE elements per program."""
    n = T.dynamic("n", "int64")
    TILE, STEPS = 1024, 4

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, STEPS * TILE), **lab.launch(gpu, threads=256)) as prog:
            staging = T.alloc_shared((STEPS * TILE,), dtype)
            begin = prog * STEPS * TILE

            # gather the tiles, then write them out in one go
            for j in T.serial(STEPS):
                T.copy(X[begin + j * TILE:begin + (j + 1) * TILE],
                       staging[j * TILE:(j + 1) * TILE])
            T.copy(staging, Y[begin:begin + STEPS * TILE])

    return copy
