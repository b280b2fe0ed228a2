"""scaled_dot_product_attention in TileLang: O = softmax(Q K^T * scale [causal]) V per (batch, head), f32
statistics and accumulation, the result rounded once to the storage dtype.

Every layout takes one program: query, key, value and out are flat buffers from their data pointers,
the batch dims' sizes and strides are in the int64 tensor M (coalesced, padded to a compiled rank: see
operator_runtime/_internal/tilelang_prims.py), and the scalars give the sizes (batch, heads, group =
H / Hkv, Sq, Sk, D, Dv), is_causal and each operand's strides over heads, sequence and features, then
the scale. Query head h reads key/value head h // group (grouped-query attention). The causal mask is
torch's, top-left aligned: query i sees keys 0..i whatever Sq and Sk are, so every query sees key 0
and only Sk = 0 leaves a row without keys (torch gives 0 there, and so do these kernels).

GPU, any layout (``_sdpa_gpu``; on an H100, 2026-12-06: correct over the op's suite, and slow: 10-21
TFLOP/s at prefill, 0.02x torch, and decode at 0.05x, its loads element by element): FlashAttention-2's
forward. A block owns BLOCK_M = 64 query rows of one (batch, head):
the query tile is loaded into shared memory once; for each tile of BLOCK_N = 64 keys (a causal tile
stops at the keys its last row sees) the key and value tiles are staged in shared memory, S = Q K^T
by ``T.gemm`` into a float32 fragment (tensor cores), scaled and masked (-inf past Sk and above the
diagonal), the online softmax keeps each row's running max and sum in fragments and rescales the
output accumulator (a float32 fragment) by exp(m_old - m_new), and P, rounded to the storage dtype
as FlashAttention does, multiplies V by ``T.gemm`` (wgmma on sm_90). The K/V loop is a ``T.Pipelined``,
but its tiles are loaded element by element through the strides (zeros past Sk, D and Dv), not by TMA
or cp.async, so any layout runs, the common (B, S, H, D).transpose(1, 2) included; in the code TileLang
0.1.15 generates those loads are synchronous (no overlap yet: the next step for speed, with TMA for
contiguous heads). Head dims are padded to a
compiled tile (HEAD_TILES: 64, 128 or 256); larger ones are refused, as are float32 operands (T.gemm
would round them to tf32).

GPU, dense (``_sdpa_dense``): the layout users pass most, contiguous (B, H, S, D) operands with D = Dv = 64
or 128 and 16-byte aligned data pointers (the backend checks each call, else the program above), as
3-d tensors (B*H, S, D) whose tiles ``T.copy`` moves whole (TMA on sm_90, out-of-range rows read as 0 and
never stored): BLOCK 128 x 128, 256 threads (two warpgroups of wgmma), two stages, and the softmax in
base 2 (exp2 instead of exp). The mask is the scores' starting value (0, or -inf past Sk and above the
diagonal) that the gemm adds to, and the scale * log2(e) is folded into exp2's argument (one FFMA per
score), so no pass over the scores follows the gemm; the row max is taken before scaling, so the
backend sends only positive scales here. On an H100 (2026-12-06, bf16, against the faster of torch's
flash and cuDNN backends in the same run, triton's do_bench): prefill b4 h32 s4096 d128 470 TFLOP/s full
(0.77x cuDNN's 608; 432 before the fold), 382 causal (0.72x), b1 h32 s16384 483 (0.79x), b8 h16 s4096
d64 310 (0.68x), b16 h16 s1024 d128 384 (0.68x). A FlashAttention-3 schedule (T.Pipelined's order and
stage: the QK^T gemm of tile t beside the rescale and PV gemm of tile t - 1) measured the same within 3%.
(Those figures: this program compiled and timed directly, its output within 0.01 of float32 sdpa on six
shapes, Sq 1000 / Sk 3001 causal among them; the op's GPU suite has not run since the fold.) Measured
before the fold: decode b32 h32 Sq 1 KV 8192 1.00-1.02x (3.05 TB/s of K and V); decode with GQA (Sq 16, 8 KV heads)
0.65x. TileLang made it warp-specialized (a TMA producer warpgroup): 168 registers, 24 bytes spilled.

CPU (TileLang's C target has no fragments, shared memory or T.gemm): ``_sdpa_cpu``, one program per
(batch, head, query row): its query row is widened to float32 once, then the keys it sees are walked
in blocks of CPU_BLOCK, each block's scores computed, its max folded into the running max (the sum
and the accumulator of Dv values rescaled once per block) and its exp(s - m) v added; head dims up to
MAX_HEAD_DIM_CPU (the row's local arrays). bfloat16 is passed as its uint16 bits (tilelang_prims).
"""

import tilelang.language as T

from operator_runtime._internal.tilelang_prims import load, offsets, storage, store

LOWEST = -3.4028234663852886e38  # running maxima start here, not at -inf: exp(-inf - LOWEST) is a clean 0
BLOCK_M, BLOCK_N, THREADS, STAGES = 64, 64, 128, 2
HEAD_TILES = (64, 128, 256)      # compiled head-dim tiles of the GPU program (D and Dv each padded up)
MAX_HEAD_DIM_CPU = 1024          # the C target's local arrays
CPU_BLOCK = 64                   # keys per block on the C target
# C target: TileLang compiles without optimization (-O0); the row loops are all arithmetic (as matmul's)
CPU_COMPILE_FLAGS = ["-O2"]
# GPU: nvcc's fast math. Without it every exp2f guards against a denormal result (a compare and two
# multiplies around MUFU.EX2) and the epilogue's divisions take the IEEE path: the dense program's SASS
# (bf16, D = 128, nvcc 13.0, sm_90a) is 3208 instructions with 72 FSETP, 2016 with none. The outputs
# are 16-bit, rounded far above ex2.approx's 2 ulp of float32 (max error against float32 sdpa unchanged).
# Measured (H100, 2026-12-08, the dense program compiled both ways in one process, bf16, TFLOP/s by
# do_bench; cuDNN beside): b4 h32 s4096 d128 476 -> 499 (620), causal 397 -> 430 (558), b1 h32 s16384
# 482 -> 511 (618), b16 h16 s1024 387 -> 439 (579), b8 h16 s4096 d64 303 -> 329 (471), b2 h40 s4096 d64
# causal 240 -> 256 (426).
GPU_PASS_CONFIGS = {"tl.enable_fast_math": True}
# what the runtime's _refuse_attention names (the record's tilelang_gpu_only)
GPU_HEAD_DIMS = f"head dims up to {HEAD_TILES[-1]}"


def head_tile(n: int) -> int | None:
    """The compiled tile holding a head dim of n (None: too large for the GPU program)."""
    return next((t for t in HEAD_TILES if n <= t), None)


# the GPU programs test_tilelang_compile lowers: (rank, D tile, Dv tile)
GPU_VARIANTS = [(3, 64, 64), (3, 128, 128), (8, 256, 64)]
# the dense program: its head dims, tiles, threads and stages
DENSE_HEAD_DIMS = (64, 128)
DENSE_BLOCK_M, DENSE_BLOCK_N, DENSE_THREADS, DENSE_STAGES = 128, 128, 256, 2
LOG2E = 1.4426950408889634


def scaled_dot_product_attention_program(dtype: str, gpu: bool, rank: int, d_tile: int = 0, dv_tile: int = 0):
    """rank: the compiled rank of M's batch dims; d_tile, dv_tile: the GPU program's head-dim tiles."""
    if not gpu:
        return _sdpa_cpu(dtype, rank)
    return _sdpa_gpu(dtype, rank, d_tile, dv_tile)


def _sdpa_cpu(dtype: str, rank: int):
    stored = storage(dtype, False)
    nq, nk = T.dynamic("nq", "int64"), T.dynamic("nk", "int64")
    nv, no = T.dynamic("nv", "int64"), T.dynamic("no", "int64")

    @T.prim_func
    def sdpa_cpu(Q: T.Tensor((nq,), stored), K: T.Tensor((nk,), stored), V: T.Tensor((nv,), stored),
                 O: T.Tensor((no,), stored), M: T.Tensor((5 * rank,), "int64"),
                 batch: T.int64, heads: T.int64, group: T.int64, sq: T.int64, sk: T.int64, d: T.int64,
                 dv: T.int64, causal: T.int64, qh: T.int64, qs: T.int64, qd: T.int64, kh: T.int64, ks: T.int64,
                 kd: T.int64, vh: T.int64, vs: T.int64, vd: T.int64, oh: T.int64, os: T.int64, od: T.int64,
                 scale: T.float32):
        with T.Kernel(batch * heads * sq) as p:
            q = T.alloc_local((MAX_HEAD_DIM_CPU,), "float32")    # the query row, widened once
            acc = T.alloc_local((MAX_HEAD_DIM_CPU,), "float32")  # sum of exp(s - m) v over the keys so far
            s = T.alloc_local((CPU_BLOCK,), "float32")           # the block's scores, then exp(s - m)
            stat = T.alloc_local((4,), "float32")                # running max, running sum, block max, rescale
            where = T.alloc_local((5,), "int64")                 # query row's, key head's, value head's, out row's
            row = p % sq                                         # offsets; the keys this row sees
            h = p // sq % heads
            qo, ko, vo, oo = offsets(p // (sq * heads), M, rank, 4)
            where[0] = qo + h * qh + row * qs
            where[1] = ko + h // group * kh
            where[2] = vo + h // group * vh
            where[3] = oo + h * oh + row * os
            where[4] = T.if_then_else(causal != 0, T.min(row + 1, sk), sk)
            for c in T.serial(d):
                q[c] = load(Q[where[0] + c * qd], dtype, False)
            for e in T.serial(dv):
                acc[e] = 0.0
            stat[0] = LOWEST
            stat[1] = 0.0
            for b in T.serial(T.ceildiv(where[4], CPU_BLOCK)):
                stat[2] = LOWEST
                for j in T.serial(CPU_BLOCK):
                    if b * CPU_BLOCK + j < where[4]:
                        s[j] = 0.0
                        for c in T.serial(d):
                            s[j] += q[c] * load(K[where[1] + (b * CPU_BLOCK + j) * ks + c * kd], dtype, False)
                        s[j] = s[j] * scale
                        stat[2] = T.max(stat[2], s[j])
                stat[2] = T.max(stat[0], stat[2])  # the new running max
                stat[3] = T.exp(stat[0] - stat[2])
                stat[0] = stat[2]
                stat[1] = stat[1] * stat[3]
                for e in T.serial(dv):
                    acc[e] = acc[e] * stat[3]
                for j in T.serial(CPU_BLOCK):
                    if b * CPU_BLOCK + j < where[4]:
                        s[j] = T.exp(s[j] - stat[0])
                        stat[1] += s[j]
                        for e in T.serial(dv):
                            acc[e] += s[j] * load(V[where[2] + (b * CPU_BLOCK + j) * vs + e * vd], dtype, False)
            for e in T.serial(dv):  # Sk = 0: no keys, torch's 0 (not "sum > 0": a NaN sum must stay NaN)
                O[where[3] + e * od] = store(T.if_then_else(where[4] > 0, acc[e] / stat[1], 0.0), dtype, False)

    return sdpa_cpu


def _sdpa_gpu(dtype: str, rank: int, d_tile: int, dv_tile: int):
    if dtype not in ("float16", "bfloat16"):
        raise ValueError("the GPU attention program multiplies float16 and bfloat16 (T.gemm would round float32 "
                         "to tf32)")
    nq, nk = T.dynamic("nq", "int64"), T.dynamic("nk", "int64")
    nv, no = T.dynamic("nv", "int64"), T.dynamic("no", "int64")
    policy = T.GemmWarpPolicy.FullRow
    neg_inf = -T.infinity("float32")

    @T.prim_func
    def sdpa(Q: T.Tensor((nq,), dtype), K: T.Tensor((nk,), dtype), V: T.Tensor((nv,), dtype),
             O: T.Tensor((no,), dtype), M: T.Tensor((5 * rank,), "int64"),
             batch: T.int64, heads: T.int64, group: T.int64, sq: T.int64, sk: T.int64, d: T.int64,
             dv: T.int64, causal: T.int64, qh: T.int64, qs: T.int64, qd: T.int64, kh: T.int64, ks: T.int64,
             kd: T.int64, vh: T.int64, vs: T.int64, vd: T.int64, oh: T.int64, os: T.int64, od: T.int64,
             scale: T.float32):
        # x: (batch, head), many; y: the query tile (grid y is at most 65535: Sq up to 4M)
        with T.Kernel(batch * heads, T.ceildiv(sq, BLOCK_M), threads=THREADS) as (bx, by):
            Q_s = T.alloc_shared((BLOCK_M, d_tile), dtype)
            K_s = T.alloc_shared((BLOCK_N, d_tile), dtype)
            V_s = T.alloc_shared((BLOCK_N, dv_tile), dtype)
            acc_s = T.alloc_fragment((BLOCK_M, BLOCK_N), "float32")
            acc_s_cast = T.alloc_fragment((BLOCK_M, BLOCK_N), dtype)
            acc_o = T.alloc_fragment((BLOCK_M, dv_tile), "float32")
            scores_max = T.alloc_fragment((BLOCK_M,), "float32")
            scores_max_prev = T.alloc_fragment((BLOCK_M,), "float32")
            scores_scale = T.alloc_fragment((BLOCK_M,), "float32")
            scores_sum = T.alloc_fragment((BLOCK_M,), "float32")
            logsum = T.alloc_fragment((BLOCK_M,), "float32")
            where = T.alloc_local((5,), "int64")  # query, key, value, out head offsets; keys the tile sees
            h = bx % heads
            qo, ko, vo, oo = offsets(bx // heads, M, rank, 4)
            where[0] = qo + h * qh
            where[1] = ko + h // group * kh
            where[2] = vo + h // group * vh
            where[3] = oo + h * oh
            where[4] = T.if_then_else(causal != 0, T.min((by + 1) * BLOCK_M, sk), sk)
            i0 = by * BLOCK_M

            for i, c in T.Parallel(BLOCK_M, d_tile):
                Q_s[i, c] = T.if_then_else(i0 + i < sq and c < d, Q[where[0] + (i0 + i) * qs + c * qd],
                                           T.cast(0, dtype))
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, LOWEST)
            for t in T.Pipelined(T.ceildiv(where[4], BLOCK_N), num_stages=STAGES):
                for j, c in T.Parallel(BLOCK_N, d_tile):
                    K_s[j, c] = T.if_then_else(t * BLOCK_N + j < sk and c < d,
                                               K[where[1] + (t * BLOCK_N + j) * ks + c * kd], T.cast(0, dtype))
                for j, c in T.Parallel(BLOCK_N, dv_tile):
                    V_s[j, c] = T.if_then_else(t * BLOCK_N + j < sk and c < dv,
                                               V[where[2] + (t * BLOCK_N + j) * vs + c * vd], T.cast(0, dtype))
                T.clear(acc_s)
                T.gemm(Q_s, K_s, acc_s, transpose_B=True, policy=policy)
                for i, j in T.Parallel(BLOCK_M, BLOCK_N):  # scale, then mask (a negative scale flips no -inf)
                    acc_s[i, j] = T.if_then_else(t * BLOCK_N + j < sk and (causal == 0 or t * BLOCK_N + j <= i0 + i),
                                                 acc_s[i, j] * scale, neg_inf)
                T.copy(scores_max, scores_max_prev)
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)  # max(previous max, this tile's)
                for i in T.Parallel(BLOCK_M):
                    scores_scale[i] = T.exp(scores_max_prev[i] - scores_max[i])
                for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                    acc_s[i, j] = T.exp(acc_s[i, j] - scores_max[i])
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(BLOCK_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                for i, c in T.Parallel(BLOCK_M, dv_tile):
                    acc_o[i, c] *= scores_scale[i]
                T.copy(acc_s, acc_s_cast)  # P in the storage dtype, as FlashAttention multiplies it
                T.gemm(acc_s_cast, V_s, acc_o, policy=policy)
            for i, c in T.Parallel(BLOCK_M, dv_tile):
                if i0 + i < sq and c < dv:  # Sk = 0: no keys, torch's 0 (not "sum > 0": a NaN sum stays NaN)
                    O[where[3] + (i0 + i) * os + c * od] = T.cast(
                        T.if_then_else(sk > 0, acc_o[i, c] / logsum[i], 0.0), dtype)

    return sdpa


def scaled_dot_product_attention_dense_program(dtype: str, gpu: bool, d: int):
    """The dense layout's GPU program (module docstring): head dim d, one of DENSE_HEAD_DIMS."""
    if not gpu or dtype not in ("float16", "bfloat16") or d not in DENSE_HEAD_DIMS:
        raise ValueError("the dense attention program is a GPU program of float16 or bfloat16 with head dim 64 or 128")
    return _sdpa_dense(dtype, d)


def _sdpa_dense(dtype: str, d: int):
    bhq, bhk = T.dynamic("bhq", "int64"), T.dynamic("bhk", "int64")
    sq, sk = T.dynamic("sq", "int64"), T.dynamic("sk", "int64")
    bm, bn = DENSE_BLOCK_M, DENSE_BLOCK_N
    policy = T.GemmWarpPolicy.FullRow
    neg_inf = -T.infinity("float32")

    @T.prim_func
    def sdpa_dense(Q: T.Tensor((bhq, sq, d), dtype), K: T.Tensor((bhk, sk, d), dtype), V: T.Tensor((bhk, sk, d), dtype),
                   O: T.Tensor((bhq, sq, d), dtype), heads: T.int64, group: T.int64, causal: T.int64, scale: T.float32):
        # x: the query tile, y: (batch, head); blocks in launch order share a head's K and V in L2
        with T.Kernel(T.ceildiv(sq, bm), bhq, threads=DENSE_THREADS) as (bx, by):
            Q_s = T.alloc_shared((bm, d), dtype)  # the query tile, then the output tile on its way out
            K_s = T.alloc_shared((bn, d), dtype)
            V_s = T.alloc_shared((bn, d), dtype)
            acc_s = T.alloc_fragment((bm, bn), "float32")
            acc_s_cast = T.alloc_fragment((bm, bn), dtype)
            acc_o = T.alloc_fragment((bm, d), "float32")
            scores_max = T.alloc_fragment((bm,), "float32")
            scores_max_prev = T.alloc_fragment((bm,), "float32")
            scores_scale = T.alloc_fragment((bm,), "float32")
            scores_sum = T.alloc_fragment((bm,), "float32")
            logsum = T.alloc_fragment((bm,), "float32")
            kv = by // heads * (heads // group) + by % heads // group  # (batch, key/value head)
            i0 = bx * bm
            scale2 = scale * LOG2E
            tiles = T.if_then_else(causal != 0, T.min(T.ceildiv(i0 + bm, bn), T.ceildiv(sk, bn)), T.ceildiv(sk, bn))

            T.copy(Q[by, i0:i0 + bm, :], Q_s)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, LOWEST)
            for t in T.Pipelined(tiles, num_stages=DENSE_STAGES):
                T.copy(K[kv, t * bn:(t + 1) * bn, :], K_s)
                for i, j in T.Parallel(bm, bn):  # the mask as the scores' start (past Sk, above the diagonal):
                    acc_s[i, j] = T.if_then_else(t * bn + j < sk and (causal == 0 or t * bn + j <= i0 + i),
                                                 0, neg_inf)  # no pass over the scores after the gemm
                T.gemm(Q_s, K_s, acc_s, transpose_B=True, policy=policy)
                T.copy(scores_max, scores_max_prev)
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)  # of the unscaled scores: scale > 0 here
                for i in T.Parallel(bm):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale2 - scores_max[i] * scale2)
                for i, j in T.Parallel(bm, bn):  # the scale folded into exp2's argument: one FFMA per score
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale2 - scores_max[i] * scale2)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(bm):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)
                for i, c in T.Parallel(bm, d):
                    acc_o[i, c] *= scores_scale[i]
                T.copy(V[kv, t * bn:(t + 1) * bn, :], V_s)
                T.gemm(acc_s_cast, V_s, acc_o, policy=policy)
            for i, c in T.Parallel(bm, d):  # Sk = 0: no keys, torch's 0
                acc_o[i, c] = T.if_then_else(sk > 0, acc_o[i, c] / logsum[i], 0.0)
            T.copy(acc_o, Q_s)
            T.copy(Q_s, O[by, i0:i0 + bm, :])

    return sdpa_dense
