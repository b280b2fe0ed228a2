# what: correct, written differently: a 100-element tile walked with T.serial, the guard as a min()
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    tile = 100  # not a power of two: every length has a ragged tail

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, tile), **lab.launch(gpu, threads=128)) as b:
            for k in T.serial(tile):
                if b * tile + k < n:
                    Y[b * tile + k] = X[b * tile + k]

    return copy
