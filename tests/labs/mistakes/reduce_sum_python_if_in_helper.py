# what: lab 3 Part 1 with the masked load factored into a Python helper whose `if` tests TileLang values: Python runs it while the program is built (TileLang compiles only the `if`s of the prim_func body)
# check: tilelang reduce_sum reduce_sum_program
# says: building the float32 program | line 6 of your cell: if r < rows and c < row_len: | a Python `if` (or `a if cond else b`) needs True or False while the program is built | T.if_then_else(cond, a, b)
def reduce_sum_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    ROWS, TILE = 4, 256

    def load(X, r, c):  # past the last row or a row's end: 0 adds nothing
        if r < rows and c < row_len:
            return T.cast(X[r, c], "float32")
        return 0.0

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(T.ceildiv(rows, ROWS), **lab.launch(gpu, threads=256)) as bx:
            x = T.alloc_fragment((ROWS, TILE), "float32")
            sums = T.alloc_fragment((ROWS,), "float32")
            T.clear(sums)
            for k in T.serial(T.ceildiv(row_len, TILE)):
                for i, j in T.Parallel(ROWS, TILE):
                    x[i, j] = load(X, bx * ROWS + i, k * TILE + j)
                T.reduce_sum(x, sums, dim=1, clear=False)
            for i in T.Parallel(ROWS):
                if bx * ROWS + i < rows:
                    Y[bx * ROWS + i] = T.cast(sums[i], dtype)

    return reduce_sum
