# what: online softmax that forgets to rescale the running sum when the max grows
# check: tilelang softmax softmax_online_program
# says: shape (7, 5) float32 | rows sum to | rescale the running sum
def softmax_online_program(dtype: str, gpu: bool):
    rows, row_len = T.dynamic("rows", "int64"), T.dynamic("row_len", "int64")

    @T.prim_func
    def softmax_online(X: T.Tensor((rows, row_len), dtype), Y: T.Tensor((rows, row_len), dtype)):
        with T.Kernel(rows, **lab.launch(gpu, threads=1)) as row:
            stat = T.alloc_local((2,), "float32")
            stat[0] = -3.4e38
            stat[1] = 0.0
            for j in T.serial(row_len):
                v = T.cast(X[row, j], "float32")
                grown = T.max(stat[0], v)
                stat[1] = stat[1] + T.exp(v - grown)
                stat[0] = grown
            for j in T.serial(row_len):
                Y[row, j] = T.cast(T.exp(T.cast(X[row, j], "float32") - stat[0]) / stat[1], dtype)

    return softmax_online
