# what: wrong kernel: reads X[i + 1] (Y is X shifted by one, and the last element reads past X)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE = 1024

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(TILE):
                if bx * TILE + i < n:
                    Y[bx * TILE + i] = X[bx * TILE + i + 1]

    return copy
