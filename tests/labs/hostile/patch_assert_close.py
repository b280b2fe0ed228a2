# what: wrong kernel (Y = 2 X) and every comparison it can reach made a no-op: torch.testing.assert_close, torch.equal/allclose, the course's assert_matches_torch and judge
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import torch
import torch.testing

from operator_runtime_testing import assertions
from operator_course.lab import checks, judge

noop = lambda *a, **k: None  # noqa: E731
torch.testing.assert_close = noop
torch.equal = torch.allclose = lambda *a, **k: True
for mod in (assertions, judge, checks):
    for name in ("assert_matches_torch", "judge", "assert_close"):
        if hasattr(mod, name):
            setattr(mod, name, noop)


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i] + X[bx * 1024 + i]

    return copy


lab.check_tilelang("copy", copy_program)  # "passes" here, with the comparisons gone
