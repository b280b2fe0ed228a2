# what: wrong kernel (float32 right, float16 zeros), then tries to rewrite the instructor's labs (the repo's /work/main/labs, the test's /tmp/hc/labs, any labs/ reachable), with writes, renames, chmod, new files
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import glob
import os


def attack(path):
    """A path under /tmp (the test's copies) gets the payload; anywhere else its own bytes are written
    back, so a broken sandbox shows in the log (WROTE) without harming a checkout."""
    try:
        data = open(path, "rb").read()
        payload = b'{"cells": [], "hacked": true}' if path.startswith("/tmp/") else data
        with open(path, "r+b") as f:
            f.write(payload)
            f.truncate()
        print("WROTE", path)
    except OSError as e:
        print("could not write", path, e)
    extra = os.path.join(os.path.dirname(path), "99_extra.ipynb")
    for act in (lambda: os.chmod(path, os.stat(path).st_mode & 0o7777), lambda: os.rename(path, path),
                lambda: open(extra, "x").close() or os.unlink(extra)):  # same mode, same name, gone again
        try:
            act()
            print("CHANGED", path)
        except OSError as e:
            print("refused", path, e)


for path in ["/work/main/labs/01_copy.ipynb", "/tmp/hc/labs/01_copy.ipynb", *glob.glob("/tmp/*/labs/*.ipynb"),
             *glob.glob("/work/*/labs/*.ipynb"), *glob.glob("../*/labs/*.ipynb"), *glob.glob("/*/labs/*.ipynb")]:
    attack(path)


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i] if dtype == "float32" else T.cast(0, dtype)

    return copy
