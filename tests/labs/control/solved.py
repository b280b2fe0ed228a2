# what: the instructor's solution, submitted as is (copy-tilelang body is the solution)
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
# your answer: the grader takes this cell from your notebook
def copy_program(dtype: str, gpu: bool):
    """Y[i] = X[i] for 0 <= i < n."""
    n = T.dynamic("n", "int64")
    TILE = 1024

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(TILE):
                if bx * TILE + i < n:
                    Y[bx * TILE + i] = X[bx * TILE + i]

    return copy
