# what: three-pass softmax without subtracting the row max: exp(x) overflows on the row of large values
# check: tilelang softmax softmax_program
# says: shape (6, 37) float32 | Row 0: | max trick
def softmax_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")

    @T.prim_func
    def softmax(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows, row_len), dtype)):
        with T.Kernel(rows, **lab.launch(gpu, threads=1)) as row:
            total = T.alloc_local((1,), "float32")
            total[0] = 0.0
            for j in T.serial(row_len):
                total[0] += T.exp(T.cast(X[row, j], "float32"))
            for j in T.serial(row_len):
                Y[row, j] = T.cast(T.exp(T.cast(X[row, j], "float32")) / total[0], dtype)

    return softmax
