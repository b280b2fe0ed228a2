"""What the TileLang kernels (ops/<op>/tilelang/<op>.py) share: how a dtype is stored and
converted on each target, and the offsets of an element of a strided tensor.

bfloat16 on the C target. TileLang's C code generator (TVM's CodeGenC) has no C type for
bfloat16: compiling a kernel with a bfloat16 buffer for target "c" fails with "Cannot convert
type bfloat16 to C type" (g++ has no standard bfloat16 either). So on the CPU a bfloat16 tensor
is passed as its 16-bit pattern (buffer dtype uint16, the same pointer) and the kernel converts
bits itself: a bfloat16 is the top half of a float32, so widening is a shift, and narrowing
rounds to nearest even on the low 16 bits (NaN stays a quiet NaN), as torch's
c10::BFloat16 does. Arithmetic stays float32, as on the GPU.

Strided tensors. A strided kernel takes each tensor as a flat buffer from its data pointer
(its storage offset included) and a small int64 "meta" tensor of sizes and strides (in
elements; 0 for a broadcast dim), and computes each element's offset from its linear index:
the index is split into coordinates, innermost dim first, and each tensor's offset is the sum
of coordinate x stride. The rank is a compile-time constant (RANKS: the runtime first merges
dims that are contiguous in every operand, then pads with size-1 dims).
"""

from __future__ import annotations

import tilelang.language as T

RANKS = (3, 8)  # compiled ranks of the strided kernels: most layouts coalesce to <= 3 dims; 8 is the runtime's max


def rank_for(dims: int) -> int:
    """The smallest compiled rank holding ``dims`` dims."""
    for rank in RANKS:
        if dims <= rank:
            return rank
    raise ValueError(f"strided kernels take at most {RANKS[-1]} dims, got {dims}")


def storage(dtype: str, gpu: bool) -> str:
    """The buffer dtype a tensor of ``dtype`` is passed as: its bit pattern for bfloat16 on the CPU."""
    return "uint16" if dtype == "bfloat16" and not gpu else dtype


def load(value, dtype: str, gpu: bool):
    """A stored element as float32."""
    if dtype == "bfloat16" and not gpu:
        return T.reinterpret(T.shift_left(T.cast(value, "uint32"), T.uint32(16)), "float32")
    return T.cast(value, "float32")


def store(value, dtype: str, gpu: bool):
    """A float32 rounded (to nearest even) to ``dtype``, in its storage dtype."""
    if dtype == "bfloat16" and not gpu:
        bits = T.reinterpret(value, "uint32")
        odd = T.bitwise_and(T.shift_right(bits, T.uint32(16)), T.uint32(1))
        rounded = T.shift_right(bits + T.uint32(0x7FFF) + odd, T.uint32(16))
        return T.cast(T.if_then_else(value != value, T.uint32(0x7FC0), rounded), "uint16")
    return T.cast(value, dtype)


def convert(value, in_dtype: str, out_dtype: str, gpu: bool):
    """A stored element of ``in_dtype`` as ``out_dtype``'s storage: the bits themselves for one
    dtype, one cast on the GPU, through float32 on the CPU (exact for widening; one rounding)."""
    if in_dtype == out_dtype:
        return value
    if gpu:
        return T.cast(value, out_dtype)
    return store(load(value, in_dtype, gpu), out_dtype, gpu)


def offsets(linear, meta, rank: int, tensors: int, base: int = 0) -> list:
    """Offsets of element ``linear`` (row-major over the sizes) in each of ``tensors`` tensors.

    meta[base : base + rank] are the sizes, then ``rank`` strides per tensor. Coordinates are
    non-negative, so truncating division is floor division (and cheaper to lower)."""
    offs = [0] * tensors
    rest = linear
    for k in reversed(range(rank)):
        size = meta[base + k]
        coord = rest if k == 0 else T.truncmod(rest, size)
        if k:
            rest = T.truncdiv(rest, size)
        for t in range(tensors):
            offs[t] = offs[t] + coord * meta[base + rank * (t + 1) + k]
    return offs
