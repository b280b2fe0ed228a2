# your answer: the grader takes this cell from your notebook
def copy_program(dtype: str, gpu: bool):
    """Y[i] = X[i] for 0 <= i < n, STEPS tiles of TILE elements per program."""
    n = T.dynamic("n", "int64")
    TILE, STEPS = 1024, 4

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, STEPS * TILE), **lab.launch(gpu, threads=256)) as bx:
            local = T.alloc_fragment((TILE,), dtype)
            for k in T.serial(STEPS):
                off = (bx * STEPS + k) * TILE
                for i in T.Parallel(TILE):  # element by element, both ways guarded
                    local[i] = T.if_then_else(off + i < n, X[off + i], T.cast(0, dtype))
                for i in T.Parallel(TILE):
                    if off + i < n:
                        Y[off + i] = local[i]

    return copy
