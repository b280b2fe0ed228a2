"""softmax: each row's exp(x - max) / sum (the runtime: over any dim), lab 4."""

import torch

from .record import CudaLab, Operator

RECORD = Operator(
    name="softmax",
    kind="rows",
    contract_attrs=(-1,),  # dim
    contract_shapes=lambda s: (s, [s]),
    contract_bad_attrs=(((5,), "dim 5 is out of range"),),
    lab_shapes=((1, 1), (7, 5), (33, 1023), (3, 5000), (2, 70_001), (0, 9)),
    bench_shape=(8192, 8192),
    input_shapes=lambda s: [s],
    output_shape=lambda s: s,
    torch_call=lambda out, input, dim: torch.softmax(input, dim),  # no out= form: it allocates
    reference_call=lambda input, dim: torch.softmax(input.double(), dim),
    flops_per_element=5,  # max, subtract, exp, add, scale
    lab_attrs={"dim": -1},
    # large magnitudes, part of a row -inf, a whole row -inf (lab/cases.special_inputs)
    special_shape=(6, 37),
    cuda=CudaLab(pointers=("x", "y"), sizes=("rows", "row_len"), empty="rows == 0 || row_len == 0",
                 launch="softmax_kernel<T><<<(unsigned)rows, 256, 0, (cudaStream_t)stream>>>("
                        "(const T*)x, (T*)y, rows, row_len);"),
    cuda_sizes=lambda inputs: (inputs[0].shape[0], inputs[0].shape[1]),
    production={"cuda": "production: row in registers when it fits, else online",
                "tilelang": "production: row in registers (cached) or online, by row length"},
    step_bench_shapes=((8192, 8192), (131072, 256)),
    # the judge's words for softmax's own mistakes (lab/judge.py: situation -> {language: hint})
    hints={
        "unwritten": {"tilelang": "softmax makes NaN from -inf - -inf (a running max that starts at -inf meets a "
                                    "-inf entry: start the max at the lowest float), or from elements read past the "
                                    "row's end (the check surrounds inputs with NaN: mask the last tile with "
                                    "T.if_then_else(k * TILE + j < row_len, x, neutral))",
                        "cuda": "softmax makes NaN from -inf - -inf: threads (or lanes) that saw no element yet hold "
                                "m = -inf, and merging two of them computes exp(-inf - -inf); skip the rescale while "
                                "the max is -inf"},
        "row_sums": {"tilelang": "divide by the sum of exp(x - max) over the row; an online kernel must rescale the "
                                 "running sum by exp(m_old - m_new) whenever the max grows",
                     "cuda": "divide by the sum of exp(x - max) over the row; when two partial (max, sum) pairs merge, "
                             "or the running max grows, rescale the running sum by exp(m_old - m_new)"},
    },
    # the rows of special_shape (lab/cases.special_inputs) and what a wrong one says about the kernel
    special_rows={
        0: "the row of large values is wrong: exp(x) overflows float32 past x = 88. Hint: subtract the row's max "
           "before exp (the max trick)",
        1: "the row with some -inf entries is wrong: exp(-inf) is 0, but a running max that starts at -inf makes "
           "-inf - -inf = NaN. Hint: start the max at the lowest float, or skip the rescale while the max is -inf",
        2: "the fully masked row (every entry -inf) is wrong: torch's softmax is NaN there (0 / 0); a kernel that "
           "returns 0 or 1/n there treats masked rows differently from torch",
        4: "the row whose values all lie below -88 is wrong: exp(x - max) underflows to 0 unless max is the row's "
           "true max, and 0 / 0 is NaN. Hint: start the max at the lowest float (the lab's LOWEST, -3.4e38, or "
           "-inf), never at 0, and pad a tile's unused lanes with the lowest float too",
        5: "the row that is -inf but for one value (below -88) is wrong: its softmax is 1 there and 0 elsewhere. "
           "Hint: the max must come from that one value: start it (and pad unused lanes) at the lowest float, not 0",
    },
)
