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
    # rows longer than any public one, and more short rows than a fixed grid would hold
    secret_shapes=lambda rng: ((rng.randrange(2, 6), rng.randrange(70_003, 200_000) | 1),
                               (rng.randrange(300, 1500), rng.randrange(2, 64))),
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
)
