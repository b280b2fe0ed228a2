"""The inputs every lab check draws (fresh random values each run, never zeros), awkward on
purpose: one element, odd lengths, tails past a block, rows longer than a block, empty tensors.
The per-operator facts (shapes, reference, torch's peer) are the operators' records
(operator_runtime_testing/operators/<op>.py); this module is the labs' view of them.
matmul's "shape" is (M, N, K): A is (M, K), B is (K, N), C is (M, N)."""

import torch

from operator_runtime_testing.operators import OPERATORS, get

# op -> shapes, from each operator's record (operators/<op>.py): one element, odd lengths, tails
# past a block or tile, rows longer than a block, empty tensors
SHAPES = {op: list(r.lab_shapes) for op, r in OPERATORS.items()}
# GPU runs add 16-bit storage; TileLang's C target cannot express bfloat16 (laptops skip it).
DTYPES = {"cpu": (torch.float32, torch.float16), "cuda": (torch.float32, torch.float16, torch.bfloat16)}


def dtypes(op: str, device: str, lang: str) -> tuple[torch.dtype, ...]:
    """The dtypes a lab check of ``op`` takes on ``device`` in ``lang``: DTYPES, unless the record
    says otherwise (matmul's TileLang check on a GPU: tf32 tiles, see operators/matmul.py)."""
    return get(op).lab_dtypes.get((device, lang), DTYPES[device])


# the shape a performance check measures (bigger than the H200's 60 MB L2; matmul's compute-bound:
# timed in TFLOP/s, not GB/s)
BENCH_SHAPES = {op: r.bench_shape for op, r in OPERATORS.items()}
INPUTS = {op: r.inputs for op, r in OPERATORS.items()}
# torch's own op writing into ``out`` (softmax has no out= form: it allocates): the peer every
# timing of a lab kernel or a chapter step is compared with
TORCH_OPS = {op: r.torch_op for op, r in OPERATORS.items()}


def input_shapes(op: str, shape: tuple) -> list[tuple]:
    """The shape of each input of ``op`` for a lab ``shape`` (matmul's (M, N, K): A and B)."""
    return get(op).input_shapes(shape)


def reference(op: str, *inputs: torch.Tensor) -> torch.Tensor:
    """torch's answer in float64, for comparison after rounding to the output dtype."""
    return get(op).reference(*[t.double() for t in inputs])


def output_shape(op: str, shape: tuple) -> tuple:
    return get(op).output_shape(shape)


def flops(op: str, shape: tuple) -> int | None:
    """Floating-point operations of one call, for the compute-bound ops (timed in FLOP/s); else None."""
    count = get(op).flops
    return count(shape) if count else None


# Rows that break numerically naive kernels, drawn as well (the record's special_shape, (6, 37)):
# 0 large magnitudes (exp overflows float32 past 88 without the max trick), 1 part of a row -inf,
# 2 a whole row -inf (masked: torch's result is NaN), 3 ordinary values, 4 every value below -88
# (exp(x - m) underflows to 0 unless m is the row's true max: a max started at 0, or a tile padded
# with 0 instead of the lowest float, gives 0 / 0), 5 -inf but for one value below -88 (the same,
# where only one lane of one tile holds a value). Scale per dtype stays inside its range. Other kinds:
# LARGE_INPUTS below.
SPECIAL = {op: r.special_shape for op, r in OPERATORS.items() if r.special_shape}
LARGE = {torch.float32: 1e4, torch.float16: 150.0, torch.bfloat16: 1e4}
BELOW = 200.0  # rows 4 and 5 lie this far below 0: exp of any of them underflows float32


# Other kinds' special input (attention's): every input of special_shape drawn this large, so that
# products of them (attention's scores, ~ 900 here) overflow exp in float32 without the max trick.
LARGE_INPUTS = {torch.float32: 30.0, torch.float16: 30.0, torch.bfloat16: 30.0}


def special_inputs(op: str, dtype: torch.dtype, generator: torch.Generator) -> list[torch.Tensor] | None:
    if op not in SPECIAL:
        return None
    if get(op).kind != "rows":
        inputs = [torch.randn(s, generator=generator) * LARGE_INPUTS[dtype] for s in input_shapes(op, SPECIAL[op])]
        if get(op).kind == "attention":
            # key 0 opposite query 0 in every head: row 0's one score (causal: it sees key 0 alone) is
            # -scale |q_0|^2, thousands below 0, so a running max started at 0 underflows its every exp
            # (0 / 0) on every draw, not only on draws whose random scores happen to be all negative
            inputs[1][..., 0, :] = -inputs[0][..., 0, :]
        return [t.to(dtype) for t in inputs]
    x = torch.randn(SPECIAL[op], generator=generator)
    x[0] *= LARGE[dtype]
    x[1, ::3] = float("-inf")
    x[2] = float("-inf")
    x[4] -= BELOW
    one = int(torch.randint(x.shape[1], (1,), generator=generator))
    x[5], x[5, one] = float("-inf"), x[5, one] - BELOW
    return [x.to(dtype)]


def draw(op: str, shape: tuple, dtype: torch.dtype, device: str, generator: torch.Generator) -> list[torch.Tensor]:
    return [torch.randn(s, generator=generator).to(device=device, dtype=dtype) for s in input_shapes(op, shape)]
