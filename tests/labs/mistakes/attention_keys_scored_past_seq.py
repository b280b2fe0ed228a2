# what: TileLang attention that scores every key of the last tile, past seq, and masks the scores afterwards: the guard's NaN is masked away on the CPU (a blind student's lab 06 answer passed)
# check: tilelang scaled_dot_product_attention attention_program
# says: reads its input 2 (k) outside its shape | never index K or V past the last key
# your answer: the grader takes this cell from your notebook
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
            q = T.alloc_local((MAX_D,), "float32")
            acc = T.alloc_local((MAX_D,), "float32")
            s = T.alloc_local((BLOCK_N,), "float32")
            m = T.alloc_local((1,), "float32")
            m_new = T.alloc_local((1,), "float32")
            l = T.alloc_local((1,), "float32")
            alpha = T.alloc_local((1,), "float32")
            scale = 1.0 / T.sqrt(T.cast(dim, "float32"))
            for d in T.serial(dim):
                q[d] = T.cast(Q[b, h, i, d], "float32") * scale
                acc[d] = 0.0
            m[0] = LOWEST
            l[0] = 0.0
            for t in T.serial(T.ceildiv(i + 1, BLOCK_N)):
                m_new[0] = m[0]
                for j in T.serial(BLOCK_N):
                    s[j] = 0.0
                    for d in T.serial(dim):
                        s[j] += q[d] * T.cast(K[b, h, t * BLOCK_N + j, d], "float32")
                    if t * BLOCK_N + j > i:
                        s[j] = LOWEST
                    m_new[0] = T.max(m_new[0], s[j])
                alpha[0] = T.exp(m[0] - m_new[0])
                l[0] = l[0] * alpha[0]
                for d in T.serial(dim):
                    acc[d] = acc[d] * alpha[0]
                m[0] = m_new[0]
                for j in T.serial(BLOCK_N):
                    if t * BLOCK_N + j <= i:
                        p = T.exp(s[j] - m[0])
                        l[0] += p
                        for d in T.serial(dim):
                            acc[d] += p * T.cast(V[b, h, t * BLOCK_N + j, d], "float32")
            for d in T.serial(dim):
                O[b, h, i, d] = T.cast(acc[d] / l[0], dtype)

    return attention
