# what: a factory whose GPU program is another, wrong one (Y = 0): the CPU program passes, so a CPU grader must leave the check to a GPU
# answer: copy-tilelang
# expect: copy-tilelang=pending copy-tilelang-again=pending copy-cuda=failed copy-performance=failed
# expect-gpu: copy-tilelang=failed copy-tilelang-again=failed
def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE = 1024

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(TILE):
                if bx * TILE + i < n:
                    Y[bx * TILE + i] = X[bx * TILE + i] if not gpu else T.cast(0, dtype)

    return copy
