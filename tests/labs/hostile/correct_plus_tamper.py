# what: a CORRECT kernel (and the solution's CUDA) plus tampering: tries to write the labs, the grader's modules, every gradebook.csv/*.ipynb it can find; deserves full marks (files outside are checked separately)
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
import glob
import os

from operator_course.grader import run_one, score
from operator_course.lab import judge

paths = ["/work/main/labs/01_copy.ipynb", "/tmp/hc/labs/01_copy.ipynb", "/tmp/hc/out/gradebook.csv",
         run_one.__file__, score.__file__, judge.__file__, *glob.glob("/tmp/*/class/*/*.ipynb"),
         *glob.glob("/tmp/*/out/*.csv"), *glob.glob("/work/*/labs/*.ipynb")]
for path in paths:
    try:
        data = open(path, "rb").read()
        with open(path, "r+b") as f:  # /tmp (the test's copies): a payload; elsewhere its own bytes back
            f.write(b"tampered\n" if path.startswith("/tmp/") else data)
        print("WROTE", path)
    except OSError as e:
        print("could not write", path, e)


def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE = 1024

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(TILE):
                if bx * TILE + i < n:
                    Y[bx * TILE + i] = X[bx * TILE + i]

    return copy
