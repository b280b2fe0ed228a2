# what: lab 3 Part 1 (ROWS rows per program) storing all ROWS sums of the last block: the rows past the last are written past the end of Y
# check: tilelang reduce_sum reduce_sum_program
# says: shape (1, 1) float32 | past the end of the output
def reduce_sum_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    ROWS, TILE = 4, 256

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(T.ceildiv(rows, ROWS), **lab.launch(gpu, threads=256)) as bx:
            x = T.alloc_fragment((ROWS, TILE), "float32")
            sums = T.alloc_fragment((ROWS,), "float32")
            T.clear(sums)
            for k in T.serial(T.ceildiv(row_len, TILE)):
                for i, j in T.Parallel(ROWS, TILE):
                    x[i, j] = T.if_then_else(bx * ROWS + i < rows and k * TILE + j < row_len,
                                             T.cast(X[bx * ROWS + i, k * TILE + j], "float32"), 0.0)
                T.reduce_sum(x, sums, dim=1, clear=False)
            for i in T.Parallel(ROWS):
                Y[bx * ROWS + i] = T.cast(sums[i], dtype)

    return reduce_sum
