# what: reduce_sum split over a grid of rows x CHUNKS, each block adding its chunk's sum into Y[row] with a plain load and store: the C target runs the blocks in order and the sum comes out right, a GPU runs them at once and loses updates (a cheater's answer scored 3/3 before the C target refused it)
# check: tilelang reduce_sum reduce_sum_program
# says: every block along by reads and writes Y[bx] | race | T.atomic_add | whatever names your
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
            else:
                Y[row] = T.cast(T.cast(Y[row], "float32") + acc[0], dtype)

    return reduce_sum
