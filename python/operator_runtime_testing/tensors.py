"""Random test tensors described as plain data: shape, memory layout and kind of values.

    make_tensor(TensorSpec((33, 65), layout="transposed"), torch.float16, "cpu", gen)

Values are never all zeros (a kernel that writes nothing must fail), and layouts cover
what real callers pass: contiguous, transposed, strided with a storage offset, expanded,
and contiguous from storage offset 1 (no row starts 16-byte aligned where rows hold a
multiple of the vector width: kernels must not assume aligned 16-byte loads).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

LAYOUTS = ("contiguous", "transposed", "strided", "expanded", "offset")
VALUES = ("normal", "large", "extreme", "all_neg_inf")


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    layout: str = "contiguous"              # one of LAYOUTS
    values: str = "normal"                  # one of VALUES
    expand_from: tuple[int, ...] | None = None  # for layout="expanded": the stored shape

    def __post_init__(self):
        assert self.layout in LAYOUTS, self.layout
        assert self.values in VALUES, self.values

    def __str__(self) -> str:
        dims = "x".join(map(str, self.shape)) or "scalar"
        extra = "" if self.layout == "contiguous" else f"-{self.layout}"
        return dims + extra + ("" if self.values == "normal" else f"-{self.values}")


def _values(shape, values: str, gen: torch.Generator) -> torch.Tensor:
    x = torch.randn(shape, generator=gen, dtype=torch.float32)
    if values == "large":
        x *= 1e4  # exp() of these overflows unless the row max is subtracted first
    elif values == "extreme":
        flat = x.view(-1)
        flat[0::7] = float("-inf")
        flat[3::11] = float("inf")
        flat[5::13] = float("nan")
    elif values == "all_neg_inf":
        x.fill_(float("-inf"))
    return x


def make_tensor(spec: TensorSpec, dtype: torch.dtype, device, gen: torch.Generator) -> torch.Tensor:
    """Draw the stored values on the CPU (reproducible per generator), then view them."""
    shape = tuple(spec.shape)

    def stored(stored_shape):
        return _values(stored_shape, spec.values, gen).to(dtype=dtype, device=device)

    if spec.layout == "contiguous":
        return stored(shape)
    if spec.layout == "transposed":  # same logical shape, dims stored in reverse order
        return stored(shape[::-1]).permute(*reversed(range(len(shape))))
    if spec.layout == "strided":  # every other element of the last dim, from storage offset 1
        return stored(shape[:-1] + (2 * shape[-1] + 1,))[..., 1::2]
    if spec.layout == "offset":  # contiguous, one element past the storage's (aligned) start
        numel = 1
        for n in shape:
            numel *= n
        return stored((numel + 1,))[1:].view(shape)
    return stored(spec.expand_from).expand(shape)  # repeated along size-1 dims, stride 0
