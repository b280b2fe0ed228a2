# what: wrong kernel (Y = 2 X); plants modules named like the checker's (operator_runtime_testing, operator_course, numpy) in its work dir, where `python -m` would put them first on sys.path of a runner started there
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import os

SHADOW = "def assert_matches_torch(*a, **k):\n    return None\n\n\ndef __getattr__(name):\n    return lambda *a, **k: None\n"
for package in ("operator_runtime_testing", "operator_course", "operator_course/lab", "numpy"):
    os.makedirs(package, exist_ok=True)
    with open(f"{package}/__init__.py", "w") as f:
        f.write(SHADOW)
    with open(f"{package}/assertions.py", "w") as f:
        f.write(SHADOW)
with open("sitecustomize.py", "w") as f:
    f.write("import builtins\nbuiltins.__dict__['OPRT_SHADOWED'] = True\n")


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i] + X[bx * 1024 + i]

    return copy
