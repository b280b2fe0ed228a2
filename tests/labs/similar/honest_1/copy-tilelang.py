# your answer: the grader takes this cell from your notebook
def copy_program(dtype: str, gpu: bool):
    """Y[i] = X[i] for 0 <= i < n, STEPS tiles of TILE elements per program."""
    n = T.dynamic("n", "int64")
    TILE, STEPS = 1024, 4

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE * STEPS), **lab.launch(gpu, threads=256)) as b:
            buf = T.alloc_shared((TILE,), dtype)
            for s in T.serial(STEPS):
                T.copy(X[b * STEPS * TILE + s * TILE], buf)
                T.copy(buf, Y[b * STEPS * TILE + s * TILE])

    return copy
