# what: the row's sum accumulated into one element from every iteration of a T.Parallel loop (s[0] = s[0] + x[j]): right when the C target runs the iterations in order, a race on a GPU (a cheat accepted before the C target refused it)
# check: tilelang reduce_sum reduce_sum_program
# says: T.Parallel loop over j reads and writes s[0] | race | T.reduce_sum
def reduce_sum_program(dtype: str, gpu: bool):
    """The row's sum accumulated into one element from inside a T.Parallel loop (a race on a GPU)."""
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")
    TILE = 256

    @T.prim_func
    def reduce_sum(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, **lab.launch(gpu, threads=256)) as bx:
            x = T.alloc_fragment((TILE,), "float32")
            s = T.alloc_fragment((1,), "float32")
            T.clear(s)
            for k in T.serial(T.ceildiv(row_len, TILE)):
                for j in T.Parallel(TILE):
                    x[j] = T.if_then_else(k * TILE + j < row_len, T.cast(X[bx, k * TILE + j], "float32"), 0.0)
                for j in T.Parallel(TILE):
                    s[0] = s[0] + x[j]  # every iteration read-modify-writes s[0]: not independent
            Y[bx] = T.cast(s[0], dtype)

    return reduce_sum
