# what: lab 2's pipelined loop with a 64-bit tile offset: TileLang 0.1.15 cannot add it to the async copies' 32-bit thread offsets
# check: tilelang vector_add vector_add_pipelined_program
# says: the float32 program | int64 vs int32 | T.cast(bx, "int32")
def vector_add_pipelined_program(dtype: str, gpu: bool):
    n = T.dynamic("n", "int64")
    TILE, STEPS = 1024, 4

    @T.prim_func
    def vector_add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, TILE * STEPS), **lab.launch(gpu, threads=256)) as bx:
            a = T.alloc_shared((TILE,), dtype)
            b = T.alloc_shared((TILE,), dtype)
            c = T.alloc_fragment((TILE,), dtype)
            for k in T.Pipelined(STEPS, num_stages=2):
                T.copy(A[(bx * STEPS + k) * TILE], a)
                T.copy(B[(bx * STEPS + k) * TILE], b)
                for i in T.Parallel(TILE):
                    c[i] = T.cast(T.cast(a[i], "float32") + T.cast(b[i], "float32"), dtype)
                T.copy(c, C[(bx * STEPS + k) * TILE])

    return vector_add
