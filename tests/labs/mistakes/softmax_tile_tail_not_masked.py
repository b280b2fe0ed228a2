# what: tiled three-pass softmax whose max pass reads the last tile past the row's end without masking it
# check: tilelang softmax softmax_program
# says: float32 | NaN where torch | read past the row's end
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
