# your answer: the grader takes this cell from your notebook
def copy_program(dtype: str, gpu: bool):
    """Y[i] = X[i] for 0 <= i < n, STEPS tiles of TILE elements per program."""
    n = T.dynamic("n", "int64")
    TILE, STEPS = 1024, 4

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        # I load with T.copy but store by hand, guarding the tail myself
        with T.Kernel(T.ceildiv(n, STEPS * TILE), **lab.launch(gpu, threads=256)) as pid:
            base = pid * (STEPS * TILE)
            frag = T.alloc_fragment((TILE,), dtype)
            for step in T.serial(STEPS):
                start = base + step * TILE
                T.copy(X[start], frag)
                for i in T.Parallel(TILE):
                    if start + i < n:
                        Y[start + i] = frag[i]

    return copy
