"""matmul benchmark: BenchCase shapes are (M, N, K), drawn here as a (M, K) and b (K, N); a and b
read once and out written once (the least traffic any kernel can have); FLOPs: the record's.

Compute-bound where M, N and K are all large (4096^3 f16: ~1365 FLOP/byte, far right of the
H200's ridge point of ~200), memory-bound for skinny M (16 x 8192 x 8192: reading b dominates,
~16 FLOP/byte): their rows' ceiling fraction is how close they come to that bound.
"""

import torch

TINY_SHAPE = (8, 8, 8)  # host overhead: the call path, not the kernel


def make_inputs(shape, dtype, device, gen) -> list[torch.Tensor]:
    m, n, k = shape
    a = torch.randn((m, k), generator=gen).to(device=device, dtype=dtype)
    b = torch.randn((k, n), generator=gen).to(device=device, dtype=dtype)
    return [a, b]


def row_shape(inputs) -> list[int]:
    a, b = inputs
    return [*a.shape[:-1], b.shape[-1], a.shape[-1]]  # (batch,) M, N, K
