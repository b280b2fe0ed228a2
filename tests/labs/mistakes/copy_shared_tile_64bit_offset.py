# what: lab 1 through a shared tile (the handout offers T.alloc_shared) under T.serial with a 64-bit tile offset: TileLang 0.1.15 cannot lower the copy for a GPU, and the hint spoke of T.Pipelined, which the program does not use (a blind student's answer)
# check: tilelang copy copy_program
# says: the float32 program | int64 vs int32 | shared tile | T.cast(bx, "int32") | T.alloc_fragment
def copy_program(dtype: str, gpu: bool):
    """Y[i] = X[i] for 0 <= i < n, STEPS tiles of TILE elements per program."""
    n = T.dynamic("n", "int64")
    TILE, STEPS = 1024, 4

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, STEPS * TILE), **lab.launch(gpu, threads=256)) as bx:
            tile = T.alloc_shared((TILE,), dtype)
            for k in T.serial(STEPS):
                first = (bx * STEPS + k) * TILE
                T.copy(X[first], tile)
                T.copy(tile, Y[first])

    return copy
