"""Argument checks for the public API: each error names the argument and what was expected."""

from __future__ import annotations

import operator

import torch

from .native import DTYPE_CODES, MAX_RANK

DTYPE_NAMES = ", ".join(str(d).removeprefix("torch.") for d in DTYPE_CODES)


def float_tensor(op: str, name: str, value) -> torch.Tensor:
    """``value`` as a tensor the runtime can describe (f32/f16/bf16, rank <= 8, strided)."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{op}: {name} must be a torch.Tensor, got {type(value).__name__}")
    if value.dtype not in DTYPE_CODES:
        raise TypeError(f"{op}: {name} has dtype {value.dtype}; supported dtypes are {DTYPE_NAMES}")
    if value.layout != torch.strided:
        raise TypeError(f"{op}: {name} must be a dense (strided) tensor, got layout {value.layout}")
    if value.dim() > MAX_RANK:
        raise ValueError(f"{op}: {name} has {value.dim()} dims; at most {MAX_RANK} are supported")
    if value.is_neg():  # a lazy view (z.conj().imag): its memory holds the values negated
        raise ValueError(f"{op}: {name} has torch's negation bit set (a lazy view such as z.conj().imag): its memory "
                         f"holds the negated values; pass {name}.resolve_neg()")
    return value


def dim(op: str, value, rank: int, name: str = "dim") -> int:
    """A dim index normalized to 0..rank-1 (a 0-d tensor accepts 0 and -1, as in torch)."""
    if isinstance(value, bool):
        raise TypeError(f"{op}: {name} must be an int, got bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__}") from None
    span = max(rank, 1)
    if not -span <= value < span:
        raise ValueError(f"{op}: {name}={value} is out of range for a {rank}-d tensor (expected {-span}..{span - 1})")
    return value % span


def out_like(op: str, out: torch.Tensor, shape: torch.Size, dtype: torch.dtype | None) -> None:
    """``out`` must have ``shape`` (and ``dtype`` unless None) and distinct elements."""
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{op}: out has shape {tuple(out.shape)}, expected {tuple(shape)}")
    if dtype is not None and out.dtype != dtype:
        raise TypeError(f"{op}: out has dtype {out.dtype}, expected {dtype}")
    no_self_overlap(op, "out", out)


def broadcast_shape(*shapes) -> tuple[int, ...] | None:
    """numpy/torch broadcasting of the shapes, or None when they do not broadcast. Written out
    because torch.broadcast_shapes imports sympy on its first call (~1.3 s, measured in a fresh
    process): a student's first vector_add would pay it."""
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for i in range(-rank, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i} - {1}
        if len(sizes) > 1:
            return None
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def no_self_overlap(op: str, name: str, t: torch.Tensor) -> None:
    """Refuse a tensor whose elements share memory (expanded or interleaved strides)."""
    if t.numel() <= 1:
        return
    reach = 0  # furthest element offset the smaller-stride dims can reach
    dims = sorted((stride, size) for size, stride in zip(t.shape, t.stride()) if size > 1)
    for stride, size in dims:
        if stride <= reach:
            raise ValueError(
                f"{op}: {name} has overlapping elements (shape {tuple(t.shape)}, strides {t.stride()}); "
                f"write into a tensor with distinct elements, e.g. .contiguous()"
            )
        reach += (size - 1) * stride


def _byte_range(t: torch.Tensor) -> tuple[int, int]:
    start = t.data_ptr()
    extent = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride())) + 1
    return start, start + extent * t.element_size()


def disjoint_from_out(op: str, out: torch.Tensor, inputs: dict[str, torch.Tensor], allow_identical: bool) -> None:
    """``out`` must not share memory with an input (it would be overwritten while read).

    Element-wise ops may write in place into an input viewed identically (a += b).
    """
    if out.numel() == 0:
        return
    o_start, o_end = _byte_range(out)
    for name, t in inputs.items():
        if t.numel() == 0 or t.device != out.device:
            continue
        start, end = _byte_range(t)
        if start >= o_end or o_start >= end:
            continue
        identical = (t.data_ptr(), t.shape, t.stride(), t.dtype) == (out.data_ptr(), out.shape, out.stride(), out.dtype)
        if allow_identical and identical or not identical and _interleaved(out, t):
            continue
        raise ValueError(f"{op}: out overlaps {name} in memory; pass a separate out tensor")


MAX_INTERLEAVE_CHECK = 1 << 24  # storage elements: marking more costs more than refusing saves


def _interleaved(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two views whose byte ranges overlap still share no element (a[::2] and a[1::2], the
    columns of one matrix split in two): their storage offsets marked one by one. False (assume
    they share) where that is not cheap or not exact: other element sizes, another storage, or one
    past MAX_INTERLEAVE_CHECK elements."""
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if a.element_size() != b.element_size() or sa.data_ptr() != sb.data_ptr():
        return False
    n = sa.nbytes() // a.element_size()
    if n > MAX_INTERLEAVE_CHECK:
        return False
    marks = torch.zeros(n, dtype=torch.bool, device=a.device)
    marks.as_strided(a.shape, a.stride(), a.storage_offset()).fill_(True)
    return not bool(marks.as_strided(b.shape, b.stride(), b.storage_offset()).any())
