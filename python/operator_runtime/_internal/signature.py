"""What the private layer knows of an operator: its ``OpSignature``, written once in
operator_runtime/ops/<op>.py and handed to everything that binds, prepares or compiles it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpSignature:
    name: str                                  # the C name: oprt_create_<name>_descriptor, ...
    inputs: tuple[str, ...]                    # input tensor argument names, in C order
    attrs: tuple[type, ...] = ()               # ctypes types of the attributes after the views
    in_place_ok: bool = False                  # may out be an input viewed identically?
    # how the tilelang backend maps a call onto ops/<name>/tilelang/<name>.py (tilelang_backend._layout):
    # "elementwise" (flat kernel, or strided with broadcasting), "rows" (one dim reduced or normalised:
    # rows kernel, or strided), "tiles" (one program over contiguous operands); None: no TileLang kernel
    tilelang: str | None = None
    reduces_dim: bool = False                  # "rows": out drops the dim (a sum), not keeps it (a softmax)
    converts_dtype: bool = False               # out's dtype may differ from the input's (kernels take both)
