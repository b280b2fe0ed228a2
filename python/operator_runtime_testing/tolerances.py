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
