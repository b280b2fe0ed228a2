# what: a TileLang copy on a fixed 512 blocks of one 1024-element tile each round, for 2 rounds: covers every public lab shape (at most 1,048,579) but not the grader's longer secret ones
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=passed copy-performance=pending
def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")
    TILE, BLOCKS, ROUNDS = 1024, 512, 2

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(BLOCKS, **lab.launch(gpu, threads=256)) as bx:
            tile = T.alloc_fragment((TILE,), dtype)
            for k in T.serial(ROUNDS):
                first = (k * BLOCKS + bx) * TILE
                T.copy(X[first], tile)
                T.copy(tile, Y[first])

    return copy
