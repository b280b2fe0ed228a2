# what: plants torch's copy_ as the "compiled kernel" in check_tilelang.__globals__["_compiled"] for its wrong program (which writes nothing)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import torch


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < 0:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy


class TorchCopy:
    def __call__(self, *tensors):
        tensors[-1].copy_(tensors[0])


compiled = lab.check_tilelang.__globals__["_compiled"]
for dt in (torch.float32, torch.float16, torch.bfloat16):
    for device in ("cpu", "cuda"):
        compiled[(copy_program, dt, device)] = TorchCopy()
lab.check_tilelang("copy", copy_program)  # passes here: torch did the copy
