# what: Python's math.exp on TileLang expressions (a blind student's lab 06 answer met it), no hint before
# check: tilelang softmax softmax_program
# says: line 16 of your cell | use TileLang's own, T.exp(x)
import math


def softmax_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")

    @T.prim_func
    def softmax(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows, row_len), dtype)):
        with T.Kernel(rows, **lab.launch(gpu, threads=1)) as row:
            stat = T.alloc_local((2,), "float32")
            stat[0] = -3.4e38
            for j in T.serial(row_len):
                stat[0] = T.max(stat[0], T.cast(X[row, j], "float32"))
            stat[1] = 0.0
            for j in T.serial(row_len):
                stat[1] += math.exp(T.cast(X[row, j], "float32") - stat[0])
            for j in T.serial(row_len):
                Y[row, j] = T.cast(T.exp(T.cast(X[row, j], "float32") - stat[0]) / stat[1], dtype)

    return softmax
