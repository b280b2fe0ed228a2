# what: each tile's row sum as a running sum inside a T.Parallel loop, iteration j reading x[i, j - 1] that iteration j - 1 wrote: a scan when the C target runs the iterations in order, a race on a GPU; TileLang refuses to lower it for a GPU (a cheat that scored 3/3 on a CPU grader)
# check: tilelang reduce_sum reduce_sum_program
# says: lowering the float32 program for a GPU (sm_90) | (i, j - 1) and (i, j)
def reduce_sum_program(dtype: str, gpu: bool):
    """Y[r] = sum over j of X[r, j]: each tile's row sum is a running (prefix) sum inside a T.Parallel loop:
    iteration j reads x[i, j - 1], which iteration j - 1 wrote. In order (the C target) that is a scan;
    on a GPU the 256 threads run the iterations at once, a loop-carried race."""
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
                                             T.cast(X[bx * ROWS + i, k * TILE + j], "float32"), 0.0) + \
                              T.if_then_else(j > 0, x[i, j - 1], sums[i])   # running sum, carried from j - 1
                for i in T.Parallel(ROWS):
                    sums[i] = x[i, TILE - 1]
            for i in T.Parallel(ROWS):
                if bx * ROWS + i < rows:
                    Y[bx * ROWS + i] = T.cast(sums[i], dtype)

    return reduce_sum
