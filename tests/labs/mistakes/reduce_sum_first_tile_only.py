# what: reduce_sum that sums only the first 2048 elements of each row
# check: tilelang reduce_sum reduce_sum_program
# says: shape (3, 70001) float32 | rows up to 1023 long passed
def reduce_sum_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, **lab.launch(gpu, threads=1)) as row:
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0.0
            for j in T.serial(T.min(row_len, 2048)):
                acc[0] += T.cast(X[row, j], "float32")
            Y[row] = T.cast(acc[0], dtype)

    return reduce_sum
