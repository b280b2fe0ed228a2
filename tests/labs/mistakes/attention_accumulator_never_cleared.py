# what: FlashAttention's online softmax whose output accumulator is never cleared: right on the CPU (its first rescale multiplies the start by exp(lowest - m) = 0), garbage on a GPU, whose registers start with anything
# check: tilelang scaled_dot_product_attention attention_program
# says: `out` is read before anything writes it | T.clear or T.fill | failed while compiling the float32 program
def attention_program(dtype: str, gpu: bool):
    batch, heads = T.dynamic("batch", "int64"), T.dynamic("heads", "int64")
    seq, dim = T.dynamic("seq", "int64"), T.dynamic("dim", "int64")
    BLOCK_N = 16   # keys per tile
    MAX_D = 128    # the largest head dim the lab draws
    LOWEST = -3.4028234663852886e38

    @T.prim_func
    def attention(Q: T.Tensor((batch, heads, seq, dim), dtype), K: T.Tensor((batch, heads, seq, dim), dtype),
                  V: T.Tensor((batch, heads, seq, dim), dtype), O: T.Tensor((batch, heads, seq, dim), dtype)):
        with T.Kernel(seq, heads, batch, **lab.launch(gpu, threads=1)) as (i, h, b):
            q_row = T.alloc_local((MAX_D,), "float32")   # the query row, scaled by 1/sqrt(dim)
            out = T.alloc_local((MAX_D,), "float32")     # running sum of exp(score - m) * v
            p = T.alloc_local((BLOCK_N,), "float32")     # the tile's scores, then their exp(score - m)
            m = T.alloc_local((1,), "float32")           # running max
            l = T.alloc_local((1,), "float32")           # running sum of exp(score - m)
            m_new = T.alloc_local((1,), "float32")
            for c in T.serial(dim):
                q_row[c] = T.cast(Q[b, h, i, c], "float32") / T.sqrt(T.cast(dim, "float32"))
            m[0] = LOWEST
            l[0] = 0.0
            for t in T.serial(T.ceildiv(i + 1, BLOCK_N)):  # causal: keys 0..i, the tiles past i skipped
                m_new[0] = m[0]
                for j in T.serial(BLOCK_N):
                    if t * BLOCK_N + j <= i:
                        p[j] = 0.0
                        for c in T.serial(dim):
                            p[j] = p[j] + q_row[c] * T.cast(K[b, h, t * BLOCK_N + j, c], "float32")
                        m_new[0] = T.max(m_new[0], p[j])
                l[0] = l[0] * T.exp(m[0] - m_new[0])
                for c in T.serial(dim):
                    out[c] = out[c] * T.exp(m[0] - m_new[0])
                m[0] = m_new[0]
                for j in T.serial(BLOCK_N):
                    if t * BLOCK_N + j <= i:
                        p[j] = T.exp(p[j] - m[0])
                        l[0] = l[0] + p[j]
                        for c in T.serial(dim):
                            out[c] = out[c] + p[j] * T.cast(V[b, h, t * BLOCK_N + j, c], "float32")
            for c in T.serial(dim):
                O[b, h, i, c] = T.cast(out[c] / l[0], dtype)

    return attention
