"""The record types the cases modules fill in."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from operator_runtime_testing.operators import OPERATORS
from operator_runtime_testing.tensors import TensorSpec as T  # noqa: F401  (re-exported for cases)

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


@dataclass(frozen=True)
class Case:
    id: str
    inputs: tuple                     # TensorSpec per input tensor, in API order
    attrs: dict = field(default_factory=dict)
    tilelang: str | None = None       # the tilelang backend refuses this case with this message


# Operators the tilelang backend implements (the runtime's SIGNATURE says how it maps them); it
# must refuse the others by name.
TILELANG_OPS = tuple(op for op, r in OPERATORS.items() if r.signature.tilelang)
# Refusals (Case.tilelang) of an operator's GPU kernel only (e.g. matmul's TMA copies need 16-byte
# rows and K >= 1, while its C-target kernel loads element by element and runs those cases).
TILELANG_GPU_ONLY = {op: r.tilelang_gpu_only for op, r in OPERATORS.items() if r.tilelang_gpu_only}
# Operators whose TileLang GPU kernels take only some dtypes: (dtypes, the refusal of the others).
TILELANG_DTYPES = {op: r.tilelang_dtypes for op, r in OPERATORS.items() if r.tilelang_dtypes}


def tilelang_refusal(op: str, case: Case, dtype: torch.dtype, device: str) -> str | None:
    """The message (regex) the tilelang backend must refuse this case with, or None."""
    if op not in TILELANG_OPS:
        return "not implemented in the tilelang backend"
    if case.tilelang and not (device == "cpu" and case.tilelang in TILELANG_GPU_ONLY.get(op, ())):
        return case.tilelang
    if device != "cpu" and op in TILELANG_DTYPES and dtype not in TILELANG_DTYPES[op][0]:
        return TILELANG_DTYPES[op][1]
    return None


@dataclass(frozen=True)
class ErrorCase:
    id: str
    inputs: tuple                     # TensorSpec, or any other value passed as is
    attrs: dict = field(default_factory=dict)
    raises: type = ValueError
    match: str = ""                   # regex the message must contain (names the argument)
    out: object = None                # None, a TensorSpec, or "overlaps_input" / "expanded"
    dtype: torch.dtype = torch.float32  # dtype of the TensorSpec inputs
    needs_cuda: bool = False          # e.g. mixed devices


@dataclass(frozen=True)
class BenchCase:
    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32
    attrs: dict = field(default_factory=dict)
    inputs: int = 1                   # how many input tensors of `shape`


def common_error_cases(valid_inputs: tuple, attrs: dict, first: str, out_dtype_fixed: bool = True) -> list[ErrorCase]:
    """Bad input every operator must refuse, built from one valid call (inputs, attrs).

    ``first`` is the API name of the first input tensor, which the messages must name.
    """
    rest = valid_inputs[1:]
    wrong_dtype = [ErrorCase("out-wrong-dtype", valid_inputs, attrs, TypeError, "out has dtype", out="wrong_dtype")]
    return (wrong_dtype if out_dtype_fixed else []) + [
        ErrorCase("not-a-tensor", ([1.0, 2.0],) + rest, attrs, TypeError, f"{first} must be a torch.Tensor"),
        ErrorCase("int-dtype", valid_inputs, attrs, TypeError, f"{first} has dtype torch.int32", dtype=torch.int32),
        ErrorCase("f64-dtype", valid_inputs, attrs, TypeError, "supported dtypes are float32", dtype=torch.float64),
        ErrorCase("rank-9", (T((1,) * 9),) + rest, attrs, ValueError, f"{first} has 9 dims"),
        ErrorCase("unknown-backend", valid_inputs, {**attrs, "backend": "fpga"}, ValueError, "backend must be one of"),
        ErrorCase("backend-on-wrong-device", valid_inputs, {**attrs, "backend": "other-device"}, ValueError,
                  "runs on .* tensors, but"),
        ErrorCase("out-expanded", valid_inputs, attrs, ValueError, "out has overlapping elements", out="expanded"),
        ErrorCase("out-overlaps-input", valid_inputs, attrs, ValueError, "out overlaps", out="overlaps_input"),
        ErrorCase("mixed-devices", valid_inputs, attrs, ValueError, "must be on one device", out="other_device",
                  needs_cuda=True),
    ]
