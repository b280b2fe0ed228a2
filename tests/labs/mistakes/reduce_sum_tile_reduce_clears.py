# what: tile reduce_sum whose T.reduce_sum clears the total each step (clear=True, the default): only the last tile counts
# check: tilelang reduce_sum reduce_sum_program
# says: shape (3, 70001) float32 | Every element is wrong | rows up to 1023 long passed
def reduce_sum_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    TILE = 1024

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, **lab.launch(gpu, threads=256)) as row:
            x = T.alloc_fragment((1, TILE), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(total)
            for k in T.serial(T.ceildiv(row_len, TILE)):
                for i, j in T.Parallel(1, TILE):
                    x[i, j] = T.if_then_else(k * TILE + j < row_len, T.cast(X[row, k * TILE + j], "float32"), 0.0)
                T.reduce_sum(x, total, dim=1)
            Y[row] = T.cast(total[0], dtype)

    return reduce_sum
