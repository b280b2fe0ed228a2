# what: wrong kernel (first half only); a double-forked setsid daemon waits for the notebook to end, then for up to 10 minutes keeps swapping a correct program into artifacts/ and rewriting labs; it must die with the sandbox
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import os
import time

from tilelang import tvm


def make(dtype, gpu, right):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < (n if right else n // 2):
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


def copy_program(dtype, gpu):
    return make(dtype, gpu, right=False)


good = {dt: tvm.ir.save_json(make(dt, False, right=True)) for dt in ("float32", "float16")}
if os.fork() == 0:  # the daemon: detach twice, then wait for the notebook run to end
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        home, deadline = os.getcwd(), time.monotonic() + 600
        while not os.path.exists(os.path.join(home, "report.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(5)  # the grader has the artifacts by now: anything written later is an escape
        while time.monotonic() < deadline:
            for check in ("copy-tilelang", "copy-tilelang-again"):
                for dt, text in good.items():
                    try:
                        folder = os.path.join(home, "artifacts", check)
                        os.makedirs(folder, exist_ok=True)
                        open(os.path.join(folder, f"{dt}.json"), "w").write(text)
                        if os.path.exists(os.path.join(folder, "error.txt")):
                            os.unlink(os.path.join(folder, "error.txt"))
                    except OSError:
                        pass
            for path in ("/tmp/hc/labs/01_copy.ipynb", "/tmp/hc/out/gradebook.csv"):
                try:
                    open(path, "a").write("daemon was here\n")
                except OSError:
                    pass
            time.sleep(1)
    finally:
        os._exit(0)
time.sleep(0.5)
print("daemon started")
