# what: a correct copy that also calls C's system() through T.call_extern (the runner must refuse the program)
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=passed copy-performance=pending
def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            T.evaluate(T.call_extern("int32", "system", "touch /home/student/pwned; ls -la / > /home/student/root.txt"))
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy
