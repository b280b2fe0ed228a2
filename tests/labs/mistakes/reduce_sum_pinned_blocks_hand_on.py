# what: reduce_sum split over rows x 4 chunks, chunk 0 storing Y[row] and chunks 1-3 each adding into it under its own `if chunk == c` (every store pinned to one block, so the static check passes it): right when blocks run in order, lost updates on a GPU; the C target runs the grid last to first (a cheater's answer scored 3/3 before)
# check: tilelang reduce_sum reduce_sum_program
# says: is wrong for shape (
def reduce_sum_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    CHUNKS = 4
    
    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, CHUNKS, **lab.launch(gpu, threads=1)) as (row, chunk):
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0.0
            for j in T.serial(T.ceildiv(row_len, CHUNKS)):
                if chunk * T.ceildiv(row_len, CHUNKS) + j < row_len:
                    acc[0] += T.cast(X[row, chunk * T.ceildiv(row_len, CHUNKS) + j], "float32")
            if chunk == 0:
                Y[row] = T.cast(acc[0], dtype)
            if chunk == 1:
                Y[row] = T.cast(T.cast(Y[row], "float32") + acc[0], dtype)
            if chunk == 2:
                Y[row] = T.cast(T.cast(Y[row], "float32") + acc[0], dtype)
            if chunk == 3:
                Y[row] = T.cast(T.cast(Y[row], "float32") + acc[0], dtype)
    return reduce_sum
