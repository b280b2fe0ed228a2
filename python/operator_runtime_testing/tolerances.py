"""How close a result must be to torch's, per dtype: the one table every check reads.

Results are compared with a float64 reference rounded to the output dtype. A correct
kernel differs from it by the output's rounding (1-2 ulp) plus f32 accumulation error,
which grows with the number of terms summed; ``atol_per_term`` covers the latter.
"""

import torch

# dtype -> (rtol, atol): about two units in the last place of the dtype.
TOLERANCES = {
    torch.float32: (2e-6, 1e-6),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (8e-3, 1e-5),
}

# f32 accumulation error allowed per unit of sum(|x|) in a reduction (a few f32 eps).
ATOL_PER_TERM = 2.5e-7

# matmul: each output sums K products in f32, in an order that differs between backends (blocks
# of K on the CPU, k-steps of 16 inside tensor-core mma, tiles of 32 between them). Per unit of
# sum_k |a_ik * b_kj| that error is ~1 f32 eps when signs are random, growing like sqrt(K) when
# the partial sums grow steadily (terms of one sign): so the allowance is ATOL_PER_TERM * sqrt(K)
# per unit of |a| @ |b|. Products of f16/bf16 inputs are exact in f32, so one rule fits all dtypes;
# the output's own rounding (f16/bf16) is TOLERANCES' rtol.
def matmul_atol_per_term(k: int) -> float:
    return ATOL_PER_TERM * max(k, 1) ** 0.5


# The benchmark's check that our result is torch's (tests/bench/harness.py): both are rounded to the
# dtype, and attention rounds P to it before P V, so a correct pair differs by a unit in the last
# place relative to the value plus about half a unit absolute (P's rounding, summed over few keys).
# For bfloat16 (a unit is 2^-7) the old fixed rtol 1e-2, atol 1e-3 was too tight: on a bf16 causal
# attention (b1 h4 s2048 d128, the CPU, seeds 0 and 1) torch's own result was off its float32
# reference by 0.0015-0.0017 at |x| = 0.003-0.02 in 8-10 elements, and ours off torch's the same;
# none past 2 units relative plus half a unit absolute. A wrong kernel is off by far more.
def bench_tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing a benchmark's result with torch's: 1e-2 and 1e-3 unless the dtype is coarser."""
    eps = torch.finfo(dtype).eps
    return max(1e-2, 2 * eps), max(1e-3, eps / 2)
