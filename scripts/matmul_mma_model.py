#!/usr/bin/env python3
"""A Python model of ops/matmul/nvidia/matmul_cuda.cu's tensor-core kernel, for checking its index
math without a GPU: the cp.async loader (which 16-byte chunks, how many bytes valid, zero-fill),
the padded shared tiles, ldmatrix / ldmatrix.trans (PTX's m8n8 fragment rules), mma.sync m16n8k16
(PTX's A / B / C fragment layouts) and the epilogue, for both block configs (128x128, 128x256)
and all four operand layouts, on a first block and on a last block with tails in M, N and K.
Shared memory starts as NaN, so reading anything the loader did not write shows up as NaN.

    python3 scripts/matmul_mma_model.py      # ~1 min; prints the max error per variant (~1e-14)

It transcribes the kernel: change it when the kernel's tiling changes. The pipeline (stages,
waits, barriers) is not modelled: compute-sanitizer's racecheck covers that on a GPU.
"""
import numpy as np, itertools, sys
BK, STAGES, THREADS, PAD = 32, 3, 256, 8

def tile(k_inner, mn):
    outer = mn if k_inner else BK; inner = BK if k_inner else mn
    return outer, inner, inner + PAD

def load(smem, g_flat, ld, mn0, mn_size, kt, k_size, k_inner, MN):
    outer, inner, stride = tile(k_inner, MN)
    per_row = inner // 8; chunks = outer * per_row // THREADS
    assert outer * per_row % THREADS == 0
    for tid in range(THREADS):
        for c in range(chunks):
            idx = tid + c * THREADS; row = idx // per_row; col = idx % per_row * 8
            if k_inner:
                mn = mn0 + row; mn_valid = 8 if mn < mn_size else 0
                src = mn * ld + col if mn < mn_size else 0
            else:
                mn = mn0 + col; mn_valid = min(mn_size - mn, 8) if mn < mn_size else 0
                src = row * ld + mn if mn_valid else 0
            k = kt * BK + (col if k_inner else row)
            valid = 0
            if k < k_size:
                valid = min(k_size - k, mn_valid) if k_inner else mn_valid
            kstep = BK if k_inner else BK * ld
            s = src + kt * kstep
            for e in range(8):
                smem[row * stride + col + e] = g_flat[s + e] if e < valid else 0.0

def ldmatrix(smem, addr_of_lane, trans):
    # returns regs[lane][i] = (v0, v1)
    regs = [[None] * 4 for _ in range(32)]
    for i in range(4):
        rows = [addr_of_lane(i * 8 + r) for r in range(8)]  # start offsets of the 8 rows of matrix i
        m = np.array([[smem[rows[r] + c] for c in range(8)] for r in range(8)])
        for l in range(32):
            if not trans: regs[l][i] = (m[l // 4, 2 * (l % 4)], m[l // 4, 2 * (l % 4) + 1])
            else: regs[l][i] = (m[2 * (l % 4), l // 4], m[2 * (l % 4) + 1, l // 4])
    return regs

def mma(acc, af, b0, b1):
    A = np.zeros((16, 16)); B = np.zeros((16, 8))
    for l in range(32):
        g, t = l // 4, l % 4
        A[g, 2*t:2*t+2] = af[l][0]; A[g+8, 2*t:2*t+2] = af[l][1]
        A[g, 2*t+8:2*t+10] = af[l][2]; A[g+8, 2*t+8:2*t+10] = af[l][3]
        B[2*t:2*t+2, g] = b0[l]; B[2*t+8:2*t+10, g] = b1[l]
    D = A @ B
    for l in range(32):
        g, t = l // 4, l % 4
        acc[l][0] += D[g, 2*t]; acc[l][1] += D[g, 2*t+1]; acc[l][2] += D[g+8, 2*t]; acc[l][3] += D[g+8, 2*t+1]

def run(M, N, K, BM, BN, A_K, B_K, m0, n0, rng):
    Am = rng.standard_normal((M, K)); Bm = rng.standard_normal((K, N))
    # storage: A_K -> row-major with ld = K rounded to 8 ; else col-major ld = M rounded to 8
    if A_K: lda = (K + 7) // 8 * 8; ga = np.zeros(M * lda + 16); [ga.__setitem__(i * lda + k, Am[i, k]) for i in range(M) for k in range(K)]
    else: lda = (M + 7) // 8 * 8; ga = np.zeros(K * lda + 16); [ga.__setitem__(k * lda + i, Am[i, k]) for i in range(M) for k in range(K)]
    if B_K: ldb = (K + 7) // 8 * 8; gb = np.zeros(N * ldb + 16); [gb.__setitem__(j * ldb + k, Bm[k, j]) for j in range(N) for k in range(K)]
    else: ldb = (N + 7) // 8 * 8; gb = np.zeros(K * ldb + 16); [gb.__setitem__(k * ldb + j, Bm[k, j]) for j in range(N) for k in range(K)]
    WARP_M, WARP_N = BM // 2, BN // 4; MT, NT = WARP_M // 16, WARP_N // 8
    _, _, sa_stride = tile(A_K, BM); _, _, sb_stride = tile(B_K, BN)
    sa_outer = BM if A_K else BK; sb_outer = BN if B_K else BK
    acc = {(w, i, j): [[0.0] * 4 for _ in range(32)] for w in range(8) for i in range(MT) for j in range(NT)}
    for kt in range((K + BK - 1) // BK):
        sa = np.full(sa_outer * sa_stride, np.nan); sb = np.full(sb_outer * sb_stride, np.nan)
        load(sa, ga, lda, m0, M, kt, K, A_K, BM); load(sb, gb, ldb, n0, N, kt, K, B_K, BN)
        for w in range(8):
            wm, wn = w // 4 * WARP_M, w % 4 * WARP_N
            for ks in (0, 16):
                bf = {}
                for j in range(0, NT, 2):
                    n = wn + j * 8
                    if B_K: f = lambda l: (n + (l//8 >> 1) * 8 + l % 8) * sb_stride + ks + (l//8 & 1) * 8
                    else: f = lambda l: (ks + (l//8 & 1) * 8 + l % 8) * sb_stride + n + (l//8 >> 1) * 8
                    x = ldmatrix(sb, f, not B_K)
                    bf[j] = ([x[l][0] for l in range(32)], [x[l][1] for l in range(32)])
                    bf[j+1] = ([x[l][2] for l in range(32)], [x[l][3] for l in range(32)])
                for i in range(MT):
                    m = wm + i * 16
                    if A_K: f = lambda l: (m + (l//8 & 1) * 8 + l % 8) * sa_stride + ks + (l//8 >> 1) * 8
                    else: f = lambda l: (ks + (l//8 >> 1) * 8 + l % 8) * sa_stride + m + (l//8 & 1) * 8
                    af = ldmatrix(sa, f, A_K is False)
                    for j in range(NT): mma(acc[(w, i, j)], af, bf[j][0], bf[j][1])
    out = np.full((M, N), np.nan); written = np.zeros((M, N), int)
    for (w, i, j), a in acc.items():
        wm, wn = w // 4 * WARP_M, w % 4 * WARP_N
        for l in range(32):
            g, t = l // 4, l % 4
            for h in range(2):
                row = m0 + wm + i * 16 + g + h * 8; col = n0 + wn + j * 8 + 2 * t
                if row >= M or col >= N: continue
                out[row, col] = a[l][2*h]; written[row, col] += 1
                if col + 1 < N: out[row, col + 1] = a[l][2*h+1]; written[row, col+1] += 1
    ref = Am @ Bm
    r0, r1, c0, c1 = m0, min(M, m0 + BM), n0, min(N, n0 + BN)
    blk = out[r0:r1, c0:c1]
    assert (written[r0:r1, c0:c1] == 1).all(), "every output of the block written once"
    err = np.abs(blk - ref[r0:r1, c0:c1]).max()
    return err

def main() -> int:
    rng = np.random.default_rng(0)
    worst = 0.0
    for BM, BN in [(128, 128), (128, 256)]:
        for A_K, B_K in itertools.product([True, False], repeat=2):
            M, N, K = BM + 72, BN + 40, 72  # the second block in M and N has tails; K has one
            errors = [run(M, N, K, BM, BN, A_K, B_K, m0, n0, rng) for m0, n0 in ((0, 0), (BM, BN))]
            worst = max(worst, *errors)
            print(f"{BM}x{BN} A {'row' if A_K else 'column'}-major, B {'column' if B_K else 'row'}-major: "
                  f"max error first block {errors[0]:.1e}, tail block {errors[1]:.1e}")
    return 0 if worst < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
