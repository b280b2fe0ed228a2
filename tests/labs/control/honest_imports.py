# what: correct, and imports sys, torch and operator_course itself (honestly: to print and to check its own kernel)
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
import sys

import tilelang.language as TL
import torch

import operator_course
from operator_course import lab as course_lab
from operator_course.lab import checks

print(sys.version_info[:2], torch.__version__, operator_course.__name__, file=sys.stderr)


def copy_program(dtype, gpu):
    n = TL.dynamic("n", "int64")
    block = 2048

    @TL.prim_func
    def copy(X: TL.Tensor((n,), dtype), Y: TL.Tensor((n,), dtype)):
        with TL.Kernel(TL.ceildiv(n, block), **course_lab.launch(gpu, threads=256)) as bx:
            for i in TL.Parallel(block):
                if bx * block + i < n:
                    Y[bx * block + i] = X[bx * block + i]

    return copy


checks.check_tilelang("copy", copy_program, name="my own check")  # the student's own try, before grading
