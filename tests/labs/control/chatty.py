# what: correct, but prints a lot: 20000 lines, partial lines without a newline, stderr, and a last unterminated line
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=passed copy-performance=pending
import sys

for i in range(20000):
    print(f"debug line {i}: " + "x" * 40)
for i in range(5000):
    print(i, end=" ")
sys.stderr.write("a warning without newline")
sys.stdout.write("\r\x1b[31mcolour\x1b[0m\tpartial")


def copy_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE = 1024
    print("building copy for", dtype, end="")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(TILE):
                if bx * TILE + i < n:
                    Y[bx * TILE + i] = X[bx * TILE + i]

    return copy


print("no newline at the end", end="")
