# what: wrong kernel (Y = X - X), then os.kill(-1, SIGKILL): every process it may signal (only when pid 1 is bwrap, i.e. it is sandboxed)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import os
import signal


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i] - X[bx * 1024 + i]

    return copy


try:
    init = open("/proc/1/comm").read().strip()
except OSError:
    init = "?"
print("pid 1 is", init)
if init == "bwrap":  # never outside a sandbox: there this would kill the grader's whole session
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError as e:
        print("kill(-1) refused:", e)
