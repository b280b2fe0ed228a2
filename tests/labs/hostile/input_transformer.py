# what: an IPython input transformer turns every later cell (the grader's export cells included) into `pass`; wrong kernel (Y = 0)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = T.cast(0, dtype)

    return copy


def everything_passes(lines):
    return ["print('copy (TileLang): passed')\n"]


ip = get_ipython()
ip.input_transformers_cleanup.append(everything_passes)
ip.input_transformers_post.append(everything_passes)
