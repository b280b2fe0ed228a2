# what: wrong kernel: the guard is `< n - 1`, so the last element is never written (stays NaN)
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=passed copy-performance=pending
def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE = 1024

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(TILE):
                if bx * TILE + i < n - 1:
                    Y[bx * TILE + i] = X[bx * TILE + i]

    return copy
