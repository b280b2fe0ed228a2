# what: TileLang copy over a fixed number of blocks (264) with no guard on its stores: on a small input it stores far past every guard region, which killed the student's Jupyter kernel ("Kernel died") before the C target ran in a child process; now the check says it crashed, or (where memory lies past the buffer) that it wrote outside the output
# check: tilelang copy copy_program
# says: shape (1,) | outside the | guard
def copy_program(dtype: str, gpu: bool):
    """Y[i] = X[i] for 0 <= i < n, STEPS tiles of TILE elements per program."""
    n = T.dynamic("n", "int64")
    TILE, STEPS = 1024, 4

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(264, **lab.launch(gpu, threads=256)) as bx:
            for k in T.serial(STEPS):
                for i in T.Parallel(TILE):
                    Y[(bx * STEPS + k) * TILE + i] = X[(bx * STEPS + k) * TILE + i]

    return copy
