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
tiles so blocks are not mostly padding; M of 65-256 over a wide N, 128 x 64 tiles six stages
deep; the rest 128 x 128.

CPU (TileLang's C target: no threads, no shared memory, no tensor cores): ``_matmul_cpu``, the
same blocking with local arrays, any sizes and K = 0, f32 / f16 / bf16 (bfloat16 as its uint16
bits, tilelang_prims.py), compiled with CPU_COMPILE_FLAGS.
"""

import tilelang.language as T

from operator_runtime._internal.tilelang_prims import load, storage, store

# name: (BLOCK_M, BLOCK_N, BLOCK_K, STAGES, THREADS, SWIZZLE, POLICY, STORE). BLOCK_K = 64: 128-byte
# f16 rows, the widest shared-memory swizzle wgmma reads. SWIZZLE: T.use_swizzle's panel size
# (blocks launched in panels of that many tiles so neighbours share A and B in L2; 0: off).
# POLICY: how T.gemm splits the tile over warps (T.GemmWarpPolicy). STORE: how C leaves the
# registers (tiled_matmul): "shared" = stmatrix into a shared tile, then TMA stores.
# Shared memory: large 3 x (128x64 + 64x256) x 2 B = 144 KiB + the 64 KiB C tile, square
# 96 + 32 KiB, short 6 x (128x64 + 64x64) x 2 B = 144 + 16 KiB, skinny 3 x (64x128 + 128x128) x 2 B
# = 144 + 16 KiB (an H200 SM has 228 KiB).
# scripts/matmul_tilelang_sweep.py times candidates on the GPU and prints rows to paste here; the
# rows below are its picks on the H200 (that sweep, torch ms / ours, CUDA graphs):
# the shared-memory epilogue took large 4096^3 from 0.82-0.83x to 0.97-1.00x (panels of 16) and
# 8192^3 from 0.90x to 1.00-1.01x, short 128x8192x8192 from 0.89-0.92x to 0.99-1.01x, skinny
# 16x8192x8192 from 0.74-0.87x to 0.80-0.95x. Each thread storing its accumulators straight to
# global memory (2-byte stores, 128 per thread for the large tile) was the cost.
CONFIGS = {
    "large": (128, 256, 64, 3, 256, 16, "FullRow", "shared"),
    "square": (128, 128, 64, 3, 128, 0, "Square", "shared"),
    "short": (128, 64, 64, 6, 128, 0, "Square", "shared"),
    "skinny": (64, 128, 128, 3, 128, 0, "Square", "shared"),
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
        return _matmul_cpu(dtype)
    return tiled_matmul(dtype, *CONFIGS[config])


def tiled_matmul(dtype: str, block_m: int, block_n: int, block_k: int, stages: int, threads: int,
                 swizzle: int = 0, policy: str = "Square", store: str = "direct"):
    """The GEMM for one tile config (a CONFIGS row); the sweep script compiles candidates with it.
    store: how the C tile leaves the registers. "direct": each thread stores its accumulator
    elements to global memory (2-byte stores, guarded at the edges); "shared": through a shared
    tile (stmatrix) and one TMA store per 64-column slice, which clips the edges itself, at the
    cost of BLOCK_M x BLOCK_N x 2 bytes more shared memory."""
    if store not in ("direct", "shared"):
        raise ValueError(f"store must be 'direct' or 'shared', not {store!r}")
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
            if store == "shared":
                C_s = T.alloc_shared((block_m, block_n), dtype)
                T.copy(C_r, C_s)
                T.copy(C_s, C[bz, by * block_m, bx * block_n])
            else:
                T.copy(C_r, C[bz, by * block_m, bx * block_n])

    return matmul


# The C target: TileLang builds its C code without an optimization flag (g++ -O0: the 256^3 f32
# product took 340 ms, 16 ms with -O2 and 9 ms with the loop order below), so matmul's CPU kernel
# asks for -O2 (IEEE semantics kept: no -ffast-math).
CPU_COMPILE_FLAGS = ["-O2"]
CPU_BM = CPU_BN = CPU_BK = 32  # three 4 KiB float32 tiles: they stay in L1


def _matmul_cpu(dtype: str):
    """One block after another: a 32 x 32 tile of C in float32, K 32 at a time; the operand tiles
    are widened to float32 as they are loaded (0 past M, N and K), so a tail multiplies zeros and
    K = 0 stores zeros. The product is written as i, k, j loops, j innermost over contiguous rows
    of b_t and acc (g++ vectorizes it), not with T.gemm: on the C target T.gemm lowers to i, j, k
    loops that walk b_t by column, half the speed (measured, 256^3 f32)."""
    stored = storage(dtype, False)
    batch, M = T.dynamic("batch", "int32"), T.dynamic("M", "int32")
    N, K = T.dynamic("N", "int32"), T.dynamic("K", "int32")
    # an operand's batch is C's or 1 (one matrix repeated over the batch, as torch.matmul broadcasts)
    batch_a, batch_b = T.dynamic("batch_a", "int32"), T.dynamic("batch_b", "int32")

    @T.prim_func
    def matmul_cpu(A: T.Tensor((batch_a, M, K), stored), B: T.Tensor((batch_b, K, N), stored),
                   C: T.Tensor((batch, M, N), stored)):
        with T.Kernel(T.ceildiv(N, CPU_BN), T.ceildiv(M, CPU_BM), batch) as (bx, by, bz):
            za, zb = T.min(bz, batch_a - 1), T.min(bz, batch_b - 1)  # 0 for a repeated matrix
            a_t = T.alloc_local((CPU_BM, CPU_BK), "float32")
            b_t = T.alloc_local((CPU_BK, CPU_BN), "float32")
            acc = T.alloc_local((CPU_BM, CPU_BN), "float32")
            for i, j in T.grid(CPU_BM, CPU_BN):
                acc[i, j] = 0.0
            for ko in T.serial(T.ceildiv(K, CPU_BK)):
                for i, kk in T.grid(CPU_BM, CPU_BK):
                    a_t[i, kk] = T.if_then_else(by * CPU_BM + i < M and ko * CPU_BK + kk < K,
                                                load(A[za, by * CPU_BM + i, ko * CPU_BK + kk], dtype, False), 0.0)
                for kk, j in T.grid(CPU_BK, CPU_BN):
                    b_t[kk, j] = T.if_then_else(ko * CPU_BK + kk < K and bx * CPU_BN + j < N,
                                                load(B[zb, ko * CPU_BK + kk, bx * CPU_BN + j], dtype, False), 0.0)
                for i, kk in T.grid(CPU_BM, CPU_BK):
                    for j in T.serial(CPU_BN):
                        acc[i, j] += a_t[i, kk] * b_t[kk, j]
            for i, j in T.grid(CPU_BM, CPU_BN):
                if by * CPU_BM + i < M and bx * CPU_BN + j < N:
                    C[bz, by * CPU_BM + i, bx * CPU_BN + j] = store(acc[i, j], dtype, False)

    return matmul_cpu
