# what: lab 4 Part 1 masking the last tile in the sum pass but not in the max pass ("a few extra elements cannot hurt a max"): the max takes in the next row (or what lies past the tensor)
# check: tilelang softmax softmax_program
# says: shape (3, 3001) float32 | your kernel reads past the end of the row | of row 1's 3001 results are not finite | the lowest float for a max
def softmax_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    TILE = 1024
    LOWEST = -3.4028234663852886e38

    @T.prim_func
    def softmax(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows, row_len), dtype)):
        with T.Kernel(rows, **lab.launch(gpu, threads=256)) as row:
            x = T.alloc_fragment((1, TILE), "float32")
            y = T.alloc_fragment((1, TILE), dtype)
            m = T.alloc_fragment((1,), "float32")
            s = T.alloc_fragment((1,), "float32")
            T.fill(m, LOWEST)
            for k in T.serial(T.ceildiv(row_len, TILE)):
                for i, j in T.Parallel(1, TILE):
                    x[i, j] = T.cast(X[row, k * TILE + j], "float32")
                T.reduce_max(x, m, dim=1, clear=False)
            T.clear(s)
            for k in T.serial(T.ceildiv(row_len, TILE)):
                for i, j in T.Parallel(1, TILE):
                    x[i, j] = T.if_then_else(k * TILE + j < row_len, T.exp(T.cast(X[row, k * TILE + j], "float32") - m[i]), 0.0)
                T.reduce_sum(x, s, dim=1, clear=False)
            for k in T.serial(T.ceildiv(row_len, TILE)):
                T.copy(X[row, k * TILE], x)
                for i, j in T.Parallel(1, TILE):
                    y[i, j] = T.cast(T.exp(x[i, j] - m[i]) / s[i], dtype)
                T.copy(y, Y[row, k * TILE])

    return softmax
