"""Step 2: one pass, the online softmax over K/V tiles in shared memory.

A block owns BM = 64 query rows of one (batch, head) and never stores a score outside the chip.
Its query tile is copied to shared memory once; then, per tile of BN = 32 keys, the block copies
the K and V tiles to shared memory (zeros past Sk and past the head dim), computes the tile's
scores into a (BM, BN) float32 fragment (multiply-adds in ``T.Parallel``: CUDA cores, no
``T.gemm`` yet), masks them (-inf past Sk and, causal, for keys after the row), and folds them into
each row's running max m and sum l: when the tile raises the max from m to m', l and the output
accumulator were taken against m and are rescaled by exp(m - m') first. exp(s - m') goes to shared
memory as the tile's P, and P V is added to the accumulator. One read of K and V per 64 query rows,
instead of three per row in step 1. Causal (top-left: query i sees keys 0..i) stops at the key tile
of the block's last row. Head dims up to MAX_D = 128 (the accumulator's tile).
"""

import tilelang.language as T

BM, BN, MAX_D, THREADS = 64, 32, 128, 128
LOWEST = -3.4028234663852886e38  # the running max starts here: exp(LOWEST - m) is 0, and -inf - LOWEST no NaN


def program(dtype: str, gpu: bool, causal: bool = True):
    """``causal``: the lab's call is causal self-attention; the step bench also compiles the full form."""
    batch, heads = T.dynamic("batch", "int64"), T.dynamic("heads", "int64")
    sq, sk, dim = T.dynamic("sq", "int64"), T.dynamic("sk", "int64"), T.dynamic("dim", "int64")
    launch = dict(threads=THREADS) if gpu else {}

    @T.prim_func
    def attention(Q: T.Tensor((batch, heads, sq, dim), dtype), K: T.Tensor((batch, heads, sk, dim), dtype),
                  V: T.Tensor((batch, heads, sk, dim), dtype), O: T.Tensor((batch, heads, sq, dim), dtype)):
        with T.Kernel(T.ceildiv(sq, BM), heads, batch, **launch) as (bx, h, b):
            q_tile = T.alloc_shared((BM, MAX_D), dtype)
            k_tile = T.alloc_shared((BN, MAX_D), dtype)
            v_tile = T.alloc_shared((BN, MAX_D), dtype)
            p_tile = T.alloc_shared((BM, BN), "float32")  # exp(s - m): read by the threads of other features
            score = T.alloc_fragment((BM, BN), "float32")
            acc = T.alloc_fragment((BM, MAX_D), "float32")
            m = T.alloc_fragment((BM,), "float32")
            m_new = T.alloc_fragment((BM,), "float32")
            l = T.alloc_fragment((BM,), "float32")
            tile_sum = T.alloc_fragment((BM,), "float32")
            scale = 1.0 / T.sqrt(T.cast(dim, "float32"))
            first = bx * BM
            key_end = T.if_then_else(causal, T.min(first + BM, sk), sk)  # keys past the last row's: skipped
            for r, c in T.Parallel(BM, MAX_D):
                q_tile[r, c] = T.if_then_else(first + r < sq and c < dim, Q[b, h, first + r, c], T.cast(0, dtype))
            T.clear(acc)
            T.fill(m, LOWEST)
            T.clear(l)
            for kt in T.serial(T.ceildiv(key_end, BN)):
                for j, c in T.Parallel(BN, MAX_D):
                    key = kt * BN + j
                    k_tile[j, c] = T.if_then_else(key < sk and c < dim, K[b, h, key, c], T.cast(0, dtype))
                    v_tile[j, c] = T.if_then_else(key < sk and c < dim, V[b, h, key, c], T.cast(0, dtype))
                T.clear(score)
                for f in T.serial(dim):
                    for r, j in T.Parallel(BM, BN):
                        score[r, j] += T.cast(q_tile[r, f], "float32") * T.cast(k_tile[j, f], "float32")
                for r, j in T.Parallel(BM, BN):
                    key = kt * BN + j
                    seen = key < sk and (not causal or key <= first + r)
                    score[r, j] = T.if_then_else(seen, score[r, j] * scale, -T.infinity("float32"))
                T.reduce_max(score, m_new, dim=1)
                for r in T.Parallel(BM):
                    m_new[r] = T.max(m_new[r], m[r])
                for r, j in T.Parallel(BM, BN):
                    p_tile[r, j] = T.exp(score[r, j] - m_new[r])  # 0 for a masked key
                    score[r, j] = p_tile[r, j]
                T.reduce_sum(score, tile_sum, dim=1)
                for r, c in T.Parallel(BM, MAX_D):  # the max grew: what was summed against m is rescaled
                    acc[r, c] *= T.exp(m[r] - m_new[r])
                for r in T.Parallel(BM):
                    l[r] = l[r] * T.exp(m[r] - m_new[r]) + tile_sum[r]
                    m[r] = m_new[r]
                for j in T.serial(BN):
                    for r, c in T.Parallel(BM, MAX_D):
                        acc[r, c] += p_tile[r, j] * T.cast(v_tile[j, c], "float32")
            for r, c in T.Parallel(BM, MAX_D):
                if first + r < sq and c < dim:
                    O[b, h, first + r, c] = T.cast(T.if_then_else(l[r] > 0, acc[r, c] / l[r], 0.0), dtype)

    return attention
