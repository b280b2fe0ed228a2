"""matmul in TileLang: C[z] = A[z] @ B[z] for contiguous (batch, M, K) @ (batch, K, N), f16/bf16
inputs, f32 accumulation in registers, the result rounded once to the storage dtype.

The classic tiled GEMM: a block owns a BLOCK_M x BLOCK_N tile of C; K is walked in steps of
BLOCK_K, each step copying an A tile and a B tile into shared memory and multiplying them with
T.gemm (tensor-core mma / wgmma, chosen by TileLang for the target). T.Pipelined overlaps the
copies of later steps with the gemm of this one (TMA on sm_90, cp.async on sm_80; STAGES buffers
deep). M, N and K are dynamic: the TMA copies read out-of-range elements as 0 and the store of C
is guarded. TMA needs 16-byte row strides, so K and N must be multiples of 8 (f16/bf16) and the
operands 16-byte aligned; the runtime refuses other shapes by name (the nvidia backend runs them).

Tile configs by shape class (``gpu_strategy``): large square-ish problems take 128 x 256 tiles
(8 warps, more reuse per byte loaded); skinny M (decode-time GEMV-like, M <= 64) takes 64-row
tiles so blocks are not mostly padding; the rest 128 x 128.

No CPU kernel: T.gemm lowers to tensor-core instructions only (the runtime refuses matmul on
TileLang's C target by name; the cpu backend runs it).
"""

import tilelang.language as T

# name: (BLOCK_M, BLOCK_N, BLOCK_K, STAGES, THREADS, SWIZZLE, POLICY). BLOCK_K = 64: 128-byte
# f16 rows, the widest shared-memory swizzle wgmma reads. SWIZZLE: T.use_swizzle's panel size
# (blocks launched in panels of that many tiles so neighbours share A and B in L2; 0: off).
# POLICY: how T.gemm splits the tile over warps (T.GemmWarpPolicy). Shared memory: large
# 3 x (128x64 + 64x256) x 2 B = 144 KiB, square 96 KiB, short 6 x (128x64 + 64x64) x 2 B = 144 KiB,
# skinny 3 x (64x128 + 128x128) x 2 B = 144 KiB (an H200 SM has 228 KiB).
# scripts/matmul_tilelang_sweep.py times candidates on the GPU and prints rows to paste here; the
# rows below are its picks on the H200 (scripts/matmul_round.sh, torch ms / ours): large 8192^3
# 0.91x with panels of 8 (0.86-0.87x without), short 128x8192x8192 0.82-0.89x, skinny
# 16x8192x8192 0.73-0.86x (0.69-0.82x with the old 64-deep K tile).
CONFIGS = {
    "large": (128, 256, 64, 3, 256, 8, "FullRow"),
    "square": (128, 128, 64, 3, 128, 0, "Square"),
    "short": (128, 64, 64, 6, 128, 0, "Square"),
    "skinny": (64, 128, 128, 3, 128, 0, "Square"),
}
GPU_VARIANTS = [(name,) for name in CONFIGS]


def gpu_strategy(m: int, n: int) -> tuple[str]:
    """The tile config for an M x N output (K does not change the choice)."""
    if m <= 64:
        return ("skinny",)
    if m >= 2048 and n >= 2048:
        return ("large",)
    if m <= 256 and n >= 2048:  # a few row tiles across a wide C: deeper pipeline, narrower tiles
        return ("short",)
    return ("square",)


def matmul_program(dtype: str, gpu: bool, config: str = "square"):
    if not gpu:
        raise NotImplementedError("matmul: T.gemm has no lowering for TileLang's C target")
    return tiled_matmul(dtype, *CONFIGS[config])


def tiled_matmul(dtype: str, block_m: int, block_n: int, block_k: int, stages: int, threads: int,
                 swizzle: int = 0, policy: str = "Square"):
    """The GEMM for one tile config (a CONFIGS row); the sweep script compiles candidates with it."""
    warp_policy = getattr(T.GemmWarpPolicy, policy)
    # int32 sizes: TileLang 0.1.15 fails to lower the TMA copies and the pipeline with int64 ones
    # (index dtype mismatches); addresses are still computed in int64. The runtime refuses
    # operands of 2^31 elements or more.
    batch, M = T.dynamic("batch", "int32"), T.dynamic("M", "int32")
    N, K = T.dynamic("N", "int32"), T.dynamic("K", "int32")

    @T.prim_func
    def matmul(A: T.Tensor((batch, M, K), dtype), B: T.Tensor((batch, K, N), dtype),
               C: T.Tensor((batch, M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_n), T.ceildiv(M, block_m), batch, threads=threads) as (bx, by, bz):
            A_s = T.alloc_shared((block_m, block_k), dtype)
            B_s = T.alloc_shared((block_k, block_n), dtype)
            C_r = T.alloc_fragment((block_m, block_n), "float32")
            T.use_swizzle(panel_size=max(swizzle, 1), enable=swizzle > 0)
            T.clear(C_r)
            for k in T.Pipelined(T.ceildiv(K, block_k), num_stages=stages):
                T.copy(A[bz, by * block_m, k * block_k], A_s)
                T.copy(B[bz, k * block_k, bx * block_n], B_s)
                T.gemm(A_s, B_s, C_r, policy=warp_policy)
            T.copy(C_r, C[bz, by * block_m, bx * block_n])

    return matmul
