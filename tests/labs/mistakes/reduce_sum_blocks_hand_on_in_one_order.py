# what: each row split over 4 chunks whose partials are handed on through Y, built for the notebook's old order (last block first: the chunk that stores runs first); on a GPU the chunks race
# check: tilelang reduce_sum reduce_sum_program
# needs: cpu
# says: its result depends on the order its blocks run in | T.atomic_add
def reduce_sum_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    CHUNKS = 4 if dtype == "float32" else 1  # (16-bit partials added in Y would round: one chunk there)

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, CHUNKS, **lab.launch(gpu, threads=1)) as (row, chunk):
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0.0
            for j in T.serial(T.ceildiv(row_len, CHUNKS)):
                if chunk * T.ceildiv(row_len, CHUNKS) + j < row_len:
                    acc[0] += T.cast(X[row, chunk * T.ceildiv(row_len, CHUNKS) + j], "float32")
            if chunk == CHUNKS - 1:
                Y[row] = T.cast(acc[0], dtype)
            if chunk == CHUNKS - 2:
                Y[row] = T.cast(T.cast(Y[row], "float32") + acc[0], dtype)
            if chunk == CHUNKS - 3:
                Y[row] = T.cast(T.cast(Y[row], "float32") + acc[0], dtype)
            if chunk == CHUNKS - 4:
                Y[row] = T.cast(T.cast(Y[row], "float32") + acc[0], dtype)

    return reduce_sum
