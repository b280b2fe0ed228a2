# what: reduce_sum accumulating in the input dtype: float16 sums lose precision on long rows
# check: tilelang reduce_sum reduce_sum_program
# says: float16 | the float32 input of this shape passed | accumulate in float32
def reduce_sum_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, **lab.launch(gpu, threads=1)) as row:
            acc = T.alloc_local((1,), dtype)
            acc[0] = 0.0
            for j in T.serial(row_len):
                acc[0] += X[row, j]
            Y[row] = acc[0]

    return reduce_sum
