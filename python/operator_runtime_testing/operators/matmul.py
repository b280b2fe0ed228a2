"""matmul: C = A @ B, tiled (lab 5). Lab shapes are (M, N, K): A (M, K), B (K, N), C (M, N)."""

import torch

from ..tolerances import matmul_atol_per_term
from .record import CudaLab, Operator


def _flops(inputs, **_) -> int:
    """2 M N K per batch: a multiply and an add per term."""
    a, b = inputs
    batch = max(a.shape[0] if a.dim() == 3 else 1, b.shape[0] if b.dim() == 3 else 1)
    return 2 * batch * a.shape[-2] * b.shape[-1] * a.shape[-1]


def _extra_atol(a, b):
    magnitude = torch.matmul(a.double().abs(), b.double().abs()).nan_to_num(posinf=0)
    return matmul_atol_per_term(a.shape[-1]) * magnitude


RECORD = Operator(
    name="matmul",
    kind="matmul",
    contract_attrs=(),
    contract_shapes=lambda s: ((s[0], s[0]), [s, s[::-1]]),  # a (R, C) @ b (C, R)
    # one element, K = 1, odd sizes, tails past a 32/64 tile in every dim, K = 0 (C is all zeros: an
    # empty loop over K must still write), a long K (a float16 accumulator drifts there), empty M
    lab_shapes=((1, 1, 1), (7, 9, 13), (40, 50, 1), (33, 65, 17), (5, 6, 0), (100, 37, 129), (19, 23, 1000),
                (0, 8, 5)),
    bench_shape=(4096, 4096, 4096),  # 137 GFLOP, compute-bound: timed in TFLOP/s, not GB/s
    input_shapes=lambda s: [(s[0], s[2]), (s[2], s[1])],
    output_shape=lambda s: s[:2],
    torch_call=lambda out, a, b: torch.matmul(a, b, out=out),
    reference_call=lambda a, b: torch.matmul(a.double(), b.double()),
    extra_atol_call=_extra_atol,
    flops_call=_flops,
    flops=lambda s: _flops([torch.empty((s[0], s[2]), device="meta"), torch.empty((s[2], s[1]), device="meta")]),
    # T.gemm on a GPU multiplies float32 tiles as tf32 (a 10-bit mantissa) on the tensor cores, a
    # float32 result torch's float32 matmul would not give: the TileLang check there takes the
    # 16-bit dtypes, whose products are exact
    lab_dtypes={("cuda", "tilelang"): (torch.float16, torch.bfloat16)},
    # one 256-thread block per 32x32 tile of C: blockIdx.x walks N's tiles, blockIdx.y M's
    cuda=CudaLab(pointers=("a", "b", "c"), sizes=("m", "n", "k"), empty="m == 0 || n == 0",
                 launch="dim3 grid((unsigned)((n + 31) / 32), (unsigned)((m + 31) / 32));\n"
                        "  matmul_kernel<T><<<grid, 256, 0, (cudaStream_t)stream>>>((const T*)a, (const T*)b, "
                        "(T*)c, m, n, k);"),
    cuda_sizes=lambda inputs: (inputs[0].shape[0], inputs[1].shape[1], inputs[0].shape[1]),  # A (M, K), B (K, N)
    # refusals of the GPU kernel only: a TMA descriptor cannot describe K = 0; the C target's kernel
    # runs it (and takes every dtype: no tensor cores there to round float32 to tf32)
    tilelang_gpu_only=("needs K >= 1",),
    tilelang_dtypes=((torch.float16, torch.bfloat16), "multiplies float16 and bfloat16"),
    production={"cuda": "production: wgmma fed by TMA on sm_90 (mma.sync elsewhere); f32 on CUDA cores",
                "tilelang": "production: T.copy (TMA) and T.gemm under T.Pipelined"},
    step_bench_shapes=((4096, 4096, 4096),),  # (M, N, K): 137 GFLOP
    # the judge's words for matmul's own mistakes (lab/judge.py: situation -> {language: hint})
    hints={
        # each thread owns a (row, col) of C, not a grid-stride index: an unguarded edge tile's store
        "double_write": {"tilelang": "each element of C needs exactly one writer: guard the stores you index "
                                     "yourself with `if row < M and col < N` (T.copy guards its own tiles)",
                         "cuda": "each element of C needs exactly one thread: guard the store with "
                                 "`if (row < m && col < n)`; without it a thread whose column is past n writes "
                                 "c[row * n + col], an element of the next row that another thread owns"},
        "past_end": {"tilelang": "guard the stores of C you index yourself with `if row < M and col < N` (T.copy "
                                 "guards its own tiles): the tiles at the bottom and right edges reach past M and N",
                     "cuda": "guard the store of C with `if (row < m && col < n)`: the tiles at the bottom and "
                             "right edges have threads past M and N (and the loads: 0 past M, N or K)"},
        "precision": {"tilelang": "{evidence}: T.gemm accumulates in its third "
                                         "argument's dtype: allocate it T.alloc_fragment((BM, BN), \"float32\") and "
                                         "round to the output dtype once, in the final T.copy",
                             "cuda": "{evidence}: keep the running sum in a float "
                                     "(static_cast<float> each product's factors) and round to T once, at the store"},
        "edge_tile": {"tilelang": "only {which} past {first} are wrong: the tile at the edge is partial. T.copy "
                                    "guards its tiles; stores or loads you index yourself need `if i < M` / `if j < N`. "
                                    "Or that tile loads the wrong block: A's tile starts at row by * BM (the block's M "
                                    "index), B's at column bx * BN (its N index)",
                        "cuda": "only {which} past {first} are wrong: the tile at the edge is partial. Guard the loads "
                                "(load 0 for a row >= M, a column >= N or a k >= K) and the store (`if (row < m && "
                                "col < n)`). Or that tile loads the wrong block: A's rows come from blockIdx.y, B's "
                                "columns from blockIdx.x"},
        # the edge rows or columns left NaN: no block covered them
        "edge_unwritten": {"tilelang": "only {which} past {first} are wrong, and never written: the tile at the "
                                       "edge is partial and nothing stored it. Either no block covers it (the grid is "
                                       "T.ceildiv(N, BN) blocks along x, bx over N's tiles, and T.ceildiv(M, BM) along "
                                       "y, by over M's) or its store's guard skips it (`if i < M`, not a whole-tile test)",
                           "cuda": "only {which} past {first} are wrong, and never written: the tile at the edge is "
                                   "partial and nothing stored it. Either no block covers it (the grid is ((n + TILE - "
                                   "1) / TILE, (m + TILE - 1) / TILE): blockIdx.x over N's tiles, blockIdx.y over M's) "
                                   "or the store's guard skips it (`if (row < m && col < n)`)"},
        # only multi-tile inputs fail: where tiles past the first go, not the K loop, may be wrong
        "later_tiles": {"tilelang": "check where the tiles past the first are loaded and stored: block (bx, by) "
                                    "owns C[by * BM : (by + 1) * BM, bx * BN : (bx + 1) * BN], reads A's rows from "
                                    "by * BM and B's columns from bx * BN",
                        "cuda": "check where the tiles past the first are loaded and stored: block (blockIdx.x, "
                                "blockIdx.y) owns rows blockIdx.y * TILE.. and columns blockIdx.x * TILE.. of C"},
        # C all zeros: no product reached the accumulator, or it was cleared after the K loop
        "zeros": {"tilelang": "no product reached C: the K loop ran no iteration (K // BK is 0 when K < BK: loop "
                              "over T.ceildiv(K, BK) tiles), or the accumulator was cleared after it",
                  "cuda": "no product reached C: the K loop ran no iteration (k / TILE is 0 when k < TILE: loop over "
                          "(k + TILE - 1) / TILE tiles), or the sum was reset after it"},
        # not one element of C written: no block ran (or none stored)
        "unwritten_all": {"tilelang": "launch T.ceildiv(N, BN) x T.ceildiv(M, BM) blocks (N // BN is 0 when N < BN, "
                                      "and a grid of 0 blocks runs nothing), with bx over N's tiles and by over M's; "
                                      "and store C even when the K loop runs no iteration",
                          "cuda": "launch ((n + TILE - 1) / TILE, (m + TILE - 1) / TILE) blocks (n / TILE is 0 when "
                                  "n < TILE), blockIdx.x over N's tiles and blockIdx.y over M's; and store C even "
                                  "when the K loop runs no iteration"},
        # an out-of-bounds read (the CPU path's report): the loads, before the store
        "past_end_read": {"tilelang": "guard the loads you index yourself (0 past M, N or K; T.copy guards its own "
                                      "tiles), and check each index runs over its own dim: A[row, k], B[k, col]",
                          "cuda": "load 0 past the edges (`row < m && k0 + tx < k ? a[row * k + k0 + tx] : 0`, "
                                  "likewise for b), and check each index runs over its own dim: a[row * k + kk] "
                                  "(row < m, kk < k), b[kk * n + col] (kk < k, col < n)"},
        "k_tail": {"tilelang": "inputs with K up to {ok} passed: the K loop loses (or double-counts) the last K "
                                 "tile: loop over T.ceildiv(K, BK) tiles; T.copy zero-fills a tile past K",
                     "cuda": "inputs with K up to {ok} passed: the K loop loses the last, partial K tile, or adds "
                             "garbage past K: loop over (k + TILE - 1) / TILE tiles and load 0 where k >= K"},
        "k_zero": {"tilelang": "K = 0: C = A @ B is all zeros; clear the accumulator (T.clear) and store it "
                                      "even when the K loop runs no iteration",
                          "cuda": "K = 0: C = A @ B is all zeros; the store must run even when the K loop runs no "
                                  "iteration (and nothing may return early)"},
    },
)
