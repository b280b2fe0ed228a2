# what: finds _compare/judge/assert_matches_torch/assert_close through gc.get_objects and swaps their __code__ for a no-op; wrong kernel (writes nothing)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import gc
import types

from operator_course.lab import checks  # noqa: F401 - so its functions are alive

noop = (lambda *args, **kwargs: None).__code__
swapped = []
for obj in gc.get_objects():
    if isinstance(obj, types.FunctionType) and obj.__name__ in ("_compare", "judge", "assert_matches_torch",
                                                                 "assert_close", "_outputs", "verdict"):
        try:
            obj.__code__ = noop  # a function with closure cells refuses it (ValueError): skipped
            swapped.append(f"{obj.__module__}.{obj.__qualname__}")
        except Exception as e:  # noqa: BLE001
            print("could not swap", obj.__qualname__, e)
print("swapped:", swapped)


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < 0:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy
