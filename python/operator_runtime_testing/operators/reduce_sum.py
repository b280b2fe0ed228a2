"""reduce_sum: the sum of each row (the runtime: over any dim, keepdim), lab 3."""

import torch

from ..tolerances import ATOL_PER_TERM
from .record import CudaLab, Operator

RECORD = Operator(
    name="reduce_sum",
    kind="rows",
    contract_attrs=(-1, 0),  # dim, keepdim
    contract_shapes=lambda s: (s[:-1], [s]),
    contract_bad_attrs=(((2, 0), "dim 2 is out of range"), ((-3, 0), "dim -3 is out of range"),
                        ((1, 2), "keepdim 2 is not 0 or 1")),
    lab_shapes=((1, 1), (7, 5), (33, 1023), (3, 70_001), (4, 0), (0, 9)),
    bench_shape=(8192, 8192),
    input_shapes=lambda s: [s],
    output_shape=lambda s: s[:-1],
    torch_call=lambda out, input, dim, keepdim=False: torch.sum(input, dim, keepdim=keepdim, out=out),
    reference_call=lambda input, dim, keepdim=False: input.double().sum(dim, keepdim=keepdim),
    # float32 accumulation error grows with the magnitude summed along the row
    extra_atol_call=lambda input, dim, keepdim=False: ATOL_PER_TERM * input.double().abs().nan_to_num(posinf=0).sum(
        dim, keepdim=keepdim),
    flops_per_element=1,
    lab_attrs={"dim": -1},
    # one 256-thread block per row
    cuda=CudaLab(pointers=("x", "y"), sizes=("rows", "row_len"), empty="rows == 0",
                 launch="reduce_sum_kernel<T><<<(unsigned)rows, 256, 0, (cudaStream_t)stream>>>("
                        "(const T*)x, (T*)y, rows, row_len);"),
    cuda_sizes=lambda inputs: (inputs[0].shape[0], inputs[0].shape[1]),
    production={"cuda": "production: warp or block per row, or split rows, by shape; 16-byte loads",
                "tilelang": "production: 8 loads in flight per thread, threads by row length"},
    step_bench_shapes=((8192, 8192), (262144, 128)),  # long rows; many short rows (where a warp per row wins)
    # the judge's words for reduce_sum's own mistakes (lab/judge.py: situation -> {language: hint})
    hints={
        "empty_rows": {"tilelang": "a row of length 0 sums to 0: write the accumulator even when the loop is empty",
                       "cuda": "a row of length 0 sums to 0: write the block's result even when no thread loaded "
                               "anything"},
    },
)
