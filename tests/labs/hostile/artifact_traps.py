# what: a CORRECT kernel; also lays traps in artifacts/ for the grader's reads: a FIFO, symlinks to /dev/zero and /etc/passwd, a symlinked check folder, a 200 MB sparse file (on a GPU its own FIFO and link stand where its bfloat16 programs must go: its kernel never reaches the grader, so it fails there)
# answer: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
# expect-gpu: copy-tilelang=failed copy-tilelang-again=failed
import os


def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 256), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(256):
                if bx * 256 + i < n:
                    Y[bx * 256 + i] = X[bx * 256 + i]

    return copy


traps = [("artifacts/copy-tilelang/bfloat16.json", lambda p: os.mkfifo(p)),  # no bfloat16 on a CPU grader
         ("artifacts/copy-tilelang-again/bfloat16.json", lambda p: os.symlink("/dev/zero", p)),
         ("artifacts/copy-cuda/source.cu", lambda p: os.symlink("/etc/passwd", p)),
         ("artifacts/copy-performance", lambda p: os.symlink("/dev", p)),
         ("artifacts/copy-extra/float32.json", lambda p: open(p, "wb").truncate(200 << 20))]
for path, make in traps:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        make(path)
    except OSError as e:
        print("trap", path, "failed:", e)
