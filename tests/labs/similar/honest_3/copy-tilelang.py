# your answer: the grader takes this cell from your notebook
def copy_program(dtype: str, gpu: bool):
    """Y[i] = X[i] for 0 <= i < n, STEPS tiles of TILE elements per program."""
    n = T.dynamic("n", "int64")
    TILE, STEPS = 1024, 4

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, STEPS * TILE), **lab.launch(gpu, threads=256)) as block:
            lo = block * STEPS * TILE  # first element of this block
            chunk = T.alloc_shared((STEPS * TILE,), dtype)  # all STEPS tiles at once
            for t in T.serial(STEPS):
                T.copy(X[lo + t * TILE:lo + (t + 1) * TILE], chunk[t * TILE:(t + 1) * TILE])
            T.copy(chunk, Y[lo:lo + STEPS * TILE])

    return copy
