# what: reduce_sum whose chunks leave their partials in X, the input, for the last chunk to sum: right when blocks run in order; a store into an input is refused (the caller's tensor changes, and on a GPU the last chunk may run first)
# check: tilelang reduce_sum reduce_sum_program
# says: your program stores into X, an input | read-only
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
            L = T.ceildiv(row_len, CHUNKS)
            if chunk * L < row_len:
                X[row, chunk * L] = T.cast(acc[0], dtype)
            if chunk == CHUNKS - 1:
                tot = T.alloc_local((1,), "float32")
                tot[0] = 0.0
                for c in T.serial(CHUNKS):
                    if c * L < row_len:
                        tot[0] += T.cast(X[row, c * L], "float32")
                Y[row] = T.cast(tot[0], dtype)
    return reduce_sum
