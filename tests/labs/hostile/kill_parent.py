# what: wrong kernel (Y = X * X), then kills the kernel's parent (the notebook runner), its process group, and tries pid 1
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
                    Y[bx * 1024 + i] = X[bx * 1024 + i] * X[bx * 1024 + i]

    return copy


parent = os.getppid()
print("pid", os.getpid(), "parent", parent, open(f"/proc/{parent}/cmdline").read().replace("\0", " "))
for target, how in ((1, os.kill), (parent, os.kill), (os.getpgid(parent), os.killpg)):
    try:
        how(target, signal.SIGKILL)
        print("killed", target)
    except OSError as e:
        print("could not kill", target, e)
