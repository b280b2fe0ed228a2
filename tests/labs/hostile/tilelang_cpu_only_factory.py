# what: a factory with a program for the CPU only: on gpu=True it raises (a CPU grader that called gpu=False alone counted the CPU program's pass)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
def copy_program(dtype: str, gpu: bool):
    if gpu:
        raise NotImplementedError("no GPU version")
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(1) as bx:
            for i in T.serial(n):
                Y[i] = X[i]

    return copy
