"""The inputs every lab check draws (fresh random values each run, never zeros): one table per
operator, awkward on purpose: one element, odd lengths, tails past a block, rows longer than
a block, empty tensors."""

import torch

# op -> shapes. Element-wise ops take 1-d lengths; row ops take (rows, row_len).
SHAPES = {
    "copy": [(1,), (7,), (1023,), (4097,), (1_048_579,), (0,)],
    "vector_add": [(1,), (7,), (1023,), (4097,), (1_048_579,), (0,)],
    "reduce_sum": [(1, 1), (7, 5), (33, 1023), (3, 70_001), (4, 0), (0, 9)],
    "softmax": [(1, 1), (7, 5), (33, 1023), (3, 5000), (2, 70_001), (0, 9)],
}
# GPU runs add 16-bit storage; TileLang's C target cannot express bfloat16 (laptops skip it).
DTYPES = {"cpu": (torch.float32, torch.float16), "cuda": (torch.float32, torch.float16, torch.bfloat16)}
# the shape a performance check measures (bigger than the H200's 60 MB L2)
BENCH_SHAPES = {"copy": (1 << 26,), "vector_add": (1 << 26,), "reduce_sum": (8192, 8192), "softmax": (8192, 8192)}
INPUTS = {"copy": 1, "vector_add": 2, "reduce_sum": 1, "softmax": 1}


def reference(op: str, *inputs: torch.Tensor) -> torch.Tensor:
    """torch's answer in float64, for comparison after rounding to the output dtype."""
    x = [t.double() for t in inputs]
    if op == "copy":
        return x[0].clone()
    if op == "vector_add":
        return x[0] + x[1]
    if op == "reduce_sum":
        return x[0].sum(-1)
    return torch.softmax(x[0], -1)


# torch's own op writing into ``out`` (softmax has no out= form: it allocates): the peer every
# timing of a lab kernel or a chapter step is compared with
TORCH_OPS = {
    "copy": lambda out, x: out.copy_(x),
    "vector_add": lambda out, a, b: torch.add(a, b, out=out),
    "reduce_sum": lambda out, x: torch.sum(x, -1, out=out),
    "softmax": lambda out, x: torch.softmax(x, -1),
}


def output_shape(op: str, shape: tuple) -> tuple:
    return shape[:-1] if op == "reduce_sum" else shape


# Rows that break numerically naive kernels, drawn as well (shape (4, 37)): large magnitudes
# (exp overflows float32 past 88 without the max trick), part of a row -inf, a whole row -inf
# (masked: torch's result is NaN), ordinary values. Scale per dtype stays inside its range.
SPECIAL = {"softmax": (4, 37)}
LARGE = {torch.float32: 1e4, torch.float16: 150.0, torch.bfloat16: 1e4}


def special_inputs(op: str, dtype: torch.dtype, generator: torch.Generator) -> list[torch.Tensor] | None:
    if op not in SPECIAL:
        return None
    x = torch.randn(SPECIAL[op], generator=generator)
    x[0] *= LARGE[dtype]
    x[1, ::3] = float("-inf")
    x[2] = float("-inf")
    return [x.to(dtype)]


def draw(op: str, shape: tuple, dtype: torch.dtype, device: str, generator: torch.Generator) -> list[torch.Tensor]:
    return [torch.randn(shape, generator=generator).to(device=device, dtype=dtype) for _ in range(INPUTS[op])]
