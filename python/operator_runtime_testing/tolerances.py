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
