# what: `import sys as _s` and replace sys.modules entries (the export module, torch.testing) with fakes; wrong kernel (copies only the first 1024 elements)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import sys as _s
import types as _t

_fake = _t.ModuleType("operator_course.grader.export")
_fake.save = lambda check, *a, **k: print(f"{check}: saved for grading")
_s.modules["operator_course.grader.export"] = _fake
_testing = _t.ModuleType("torch.testing")
_testing.assert_close = lambda *a, **k: None
_s.modules["torch.testing"] = _testing
_s.modules["operator_runtime_testing.assertions"] = _t.ModuleType("operator_runtime_testing.assertions")
_s.modules["operator_runtime_testing.assertions"].assert_matches_torch = lambda *a, **k: None


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(1, **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if i < n:
                    Y[i] = X[i]

    return copy
