"""Step 1: three passes over the keys, one query row per block.

The formula as written, with the row of scores S = scale * q K^T kept nowhere: a TileLang step gets
only the op's tensors (no scratch buffer to materialise S in, as CUDA step 1 does), so each pass
computes the scores it needs again, straight from global memory. Pass 1 takes the row's max (each
thread a running max over every THREADS-th key, ``T.reduce_max`` across threads), pass 2 the sum of
exp(s - max), pass 3 adds exp(s - max) / sum times each value row into the output, a feature per
thread (the probabilities of a key tile go through shared memory, since the thread that scored a
key is not the one that owns a feature). Three times the QK^T work, and K read three times: the
cost of not keeping S. Causal is torch's top-left mask: query i sees keys 0..i, also when Sq != Sk.
Head dims of any size: pass 3 runs once per MAX_D features.
"""

import tilelang.language as T

THREADS = 128  # keys per tile in passes 1-3, and features per pass-3 chunk
MAX_D = THREADS
LOWEST = -3.4028234663852886e38  # maxima start here, not at -inf: exp(LOWEST - max) is a clean 0


def program(dtype: str, gpu: bool, causal: bool = True):
    """``causal``: the lab's call is causal self-attention; the step bench also compiles the full form."""
    batch, heads = T.dynamic("batch", "int64"), T.dynamic("heads", "int64")
    sq, sk, dim = T.dynamic("sq", "int64"), T.dynamic("sk", "int64"), T.dynamic("dim", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def attention(Q: T.Tensor((batch, heads, sq, dim), dtype), K: T.Tensor((batch, heads, sk, dim), dtype),
                  V: T.Tensor((batch, heads, sk, dim), dtype), O: T.Tensor((batch, heads, sq, dim), dtype)):
        with T.Kernel(sq, heads, batch, **launch) as (i, h, b):
            score = T.alloc_fragment((THREADS,), "float32")   # thread t: key tile * THREADS + t
            m = T.alloc_fragment((THREADS,), "float32")
            s = T.alloc_fragment((THREADS,), "float32")
            row_max = T.alloc_fragment((1,), "float32")
            row_sum = T.alloc_fragment((1,), "float32")
            p = T.alloc_shared((THREADS,), "float32")          # a key tile's probabilities, for pass 3
            acc = T.alloc_fragment((MAX_D,), "float32")        # thread t: feature chunk * MAX_D + t
            scale = 1.0 / T.sqrt(T.cast(dim, "float32"))
            seen = T.if_then_else(causal, T.min(i + 1, sk), sk)  # keys 0..seen-1
            T.fill(m, LOWEST)
            T.clear(s)
            for kt in T.serial(T.ceildiv(seen, THREADS)):  # pass 1: the max
                T.clear(score)
                for f in T.serial(dim):
                    for t in T.Parallel(THREADS):
                        j = kt * THREADS + t
                        score[t] += T.if_then_else(j < seen, T.cast(Q[b, h, i, f], "float32")
                                                   * T.cast(K[b, h, j, f], "float32"), 0.0)
                for t in T.Parallel(THREADS):
                    m[t] = T.max(m[t], T.if_then_else(kt * THREADS + t < seen, score[t] * scale, LOWEST))
            T.reduce_max(m, row_max, dim=0)
            for kt in T.serial(T.ceildiv(seen, THREADS)):  # pass 2: the sum against that max
                T.clear(score)
                for f in T.serial(dim):
                    for t in T.Parallel(THREADS):
                        j = kt * THREADS + t
                        score[t] += T.if_then_else(j < seen, T.cast(Q[b, h, i, f], "float32")
                                                   * T.cast(K[b, h, j, f], "float32"), 0.0)
                for t in T.Parallel(THREADS):
                    s[t] += T.if_then_else(kt * THREADS + t < seen, T.exp(score[t] * scale - row_max[0]), 0.0)
            T.reduce_sum(s, row_sum, dim=0)
            for ct in T.serial(T.ceildiv(dim, MAX_D)):  # pass 3, per chunk of features: O = P V
                T.clear(acc)
                for kt in T.serial(T.ceildiv(seen, THREADS)):
                    T.clear(score)
                    for f in T.serial(dim):
                        for t in T.Parallel(THREADS):
                            j = kt * THREADS + t
                            score[t] += T.if_then_else(j < seen, T.cast(Q[b, h, i, f], "float32")
                                                       * T.cast(K[b, h, j, f], "float32"), 0.0)
                    for t in T.Parallel(THREADS):
                        p[t] = T.if_then_else(kt * THREADS + t < seen,
                                              T.exp(score[t] * scale - row_max[0]) / row_sum[0], 0.0)
                    for t in T.serial(THREADS):
                        for e in T.Parallel(MAX_D):
                            j, c = kt * THREADS + t, ct * MAX_D + e
                            acc[e] += T.if_then_else(j < seen and c < dim, p[t] * T.cast(V[b, h, j, c], "float32"),
                                                     0.0)
                for e in T.Parallel(MAX_D):
                    if ct * MAX_D + e < dim:
                        O[b, h, i, ct * MAX_D + e] = T.cast(acc[e], dtype)

    return attention
