"""The inputs every lab check draws (fresh random values each run, never zeros): one table per
operator, awkward on purpose: one element, odd lengths, tails past a block, rows longer than
a block, empty tensors. matmul's "shape" is (M, N, K): A is (M, K), B is (K, N), C is (M, N)."""

import torch

# op -> shapes. Element-wise ops take 1-d lengths; row ops take (rows, row_len); matmul (M, N, K):
# one element, K = 1, odd sizes, tails past a 32/64 tile in every dim, K = 0 (C is all zeros: an
# empty loop over K must still write), a long K (a float16 accumulator drifts there), empty M.
SHAPES = {
    "copy": [(1,), (7,), (1023,), (4097,), (1_048_579,), (0,)],
    "vector_add": [(1,), (7,), (1023,), (4097,), (1_048_579,), (0,)],
    "reduce_sum": [(1, 1), (7, 5), (33, 1023), (3, 70_001), (4, 0), (0, 9)],
    "softmax": [(1, 1), (7, 5), (33, 1023), (3, 5000), (2, 70_001), (0, 9)],
    "matmul": [(1, 1, 1), (7, 9, 13), (40, 50, 1), (33, 65, 17), (5, 6, 0), (100, 37, 129), (19, 23, 1000),
               (0, 8, 5)],
}
# GPU runs add 16-bit storage; TileLang's C target cannot express bfloat16 (laptops skip it).
DTYPES = {"cpu": (torch.float32, torch.float16), "cuda": (torch.float32, torch.float16, torch.bfloat16)}
# Exceptions, (op, device, language) -> dtypes: T.gemm on a GPU multiplies float32 tiles as tf32 (a
# 10-bit mantissa) on the tensor cores, a float32 result torch's float32 matmul would not give: the
# TileLang matmul check there takes the 16-bit dtypes, whose products are exact.
DTYPE_EXCEPTIONS = {("matmul", "cuda", "tilelang"): (torch.float16, torch.bfloat16)}


def dtypes(op: str, device: str, lang: str) -> tuple[torch.dtype, ...]:
    return DTYPE_EXCEPTIONS.get((op, device, lang), DTYPES[device])
# the shape a performance check measures (bigger than the H200's 60 MB L2)
# (matmul: 4096^3, 137 GFLOP, compute-bound: timed in TFLOP/s, not GB/s)
BENCH_SHAPES = {"copy": (1 << 26,), "vector_add": (1 << 26,), "reduce_sum": (8192, 8192), "softmax": (8192, 8192),
                "matmul": (4096, 4096, 4096)}
INPUTS = {"copy": 1, "vector_add": 2, "reduce_sum": 1, "softmax": 1, "matmul": 2}


def input_shapes(op: str, shape: tuple) -> list[tuple]:
    """The shape of each input of ``op`` for a lab ``shape`` (matmul's (M, N, K): A and B)."""
    if op == "matmul":
        m, n, k = shape
        return [(m, k), (k, n)]
    return [shape] * INPUTS[op]


def reference(op: str, *inputs: torch.Tensor) -> torch.Tensor:
    """torch's answer in float64, for comparison after rounding to the output dtype."""
    x = [t.double() for t in inputs]
    if op == "copy":
        return x[0].clone()
    if op == "vector_add":
        return x[0] + x[1]
    if op == "reduce_sum":
        return x[0].sum(-1)
    if op == "matmul":
        return x[0] @ x[1]
    return torch.softmax(x[0], -1)


# torch's own op writing into ``out`` (softmax has no out= form: it allocates): the peer every
# timing of a lab kernel or a chapter step is compared with
TORCH_OPS = {
    "copy": lambda out, x: out.copy_(x),
    "vector_add": lambda out, a, b: torch.add(a, b, out=out),
    "reduce_sum": lambda out, x: torch.sum(x, -1, out=out),
    "softmax": lambda out, x: torch.softmax(x, -1),
    "matmul": lambda out, a, b: torch.matmul(a, b, out=out),
}


def output_shape(op: str, shape: tuple) -> tuple:
    if op == "matmul":
        return shape[:2]
    return shape[:-1] if op == "reduce_sum" else shape


def flops(op: str, shape: tuple) -> int | None:
    """Floating-point operations of one call, for the compute-bound ops (timed in FLOP/s); else None."""
    if op == "matmul":
        m, n, k = shape
        return 2 * m * n * k
    return None


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
    return [torch.randn(s, generator=generator).to(device=device, dtype=dtype) for s in input_shapes(op, shape)]
