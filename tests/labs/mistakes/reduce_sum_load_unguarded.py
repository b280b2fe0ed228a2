# what: lab 3 Part 1 guarding the rows past the last but not the columns past a row's end: the last tile of a row loads the next row (or past the tensor) into the sum
# check: tilelang reduce_sum reduce_sum_program
# says: shape (3, 3001) float32 | your kernel reads past the end of the row | Values beyond column 3000 of row 1 reached its result | T.if_then_else(k * TILE + j < row_len, X[row, k * TILE + j], identity) | let T.copy load the tile
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
                    x[i, j] = T.if_then_else(bx * ROWS + i < rows, T.cast(X[bx * ROWS + i, k * TILE + j], "float32"),
                                             0.0)
                T.reduce_sum(x, sums, dim=1, clear=False)
            for i in T.Parallel(ROWS):
                if bx * ROWS + i < rows:
                    Y[bx * ROWS + i] = T.cast(sums[i], dtype)

    return reduce_sum
