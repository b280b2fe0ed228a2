"""Loading the backend libraries and describing tensors to them (ctypes).

Each backend is its own shared library (``liboprt_<backend>.so``) exporting the same C
contract. Libraries are loaded with RTLD_LOCAL, so the CPU and NVIDIA backends live in
one process without their identical symbol names colliding.
"""

from __future__ import annotations

import ctypes
import importlib.resources
import os
from pathlib import Path

import torch

from ..errors import BackendUnavailableError, OperatorRuntimeError

MAX_RANK = 8

# torch dtype -> oprt_dtype code (include/operator_runtime/oprt.h)
DTYPE_CODES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}

STATUS_NAMES = (
    "SUCCESS", "NULL_POINTER", "BAD_DTYPE", "BAD_SHAPE", "BAD_STRIDES", "BAD_ATTRIBUTE",
    "BAD_DESCRIPTOR", "WORKSPACE_TOO_SMALL", "NOT_SUPPORTED", "DEVICE_ERROR", "OUT_OF_MEMORY",
    "INTERNAL",
)
STATUS = {name: code for code, name in enumerate(STATUS_NAMES)}


class TensorView(ctypes.Structure):
    """``oprt_tensor_view``: dtype, rank, shape and strides in elements."""

    _fields_ = [
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_RANK),
        ("strides", ctypes.c_int64 * MAX_RANK),
    ]

    @classmethod
    def of(cls, tensor: torch.Tensor) -> "TensorView":
        view = cls()
        view.dtype = DTYPE_CODES[tensor.dtype]
        view.rank = tensor.dim()
        for d, (size, stride) in enumerate(zip(tensor.shape, tensor.stride())):
            view.shape[d] = size
            view.strides[d] = stride
        return view


def library_dirs() -> list[Path]:
    """Where backend libraries are looked for: $CAMP_BUILD_DIR first, then the package."""
    dirs = []
    if os.environ.get("CAMP_BUILD_DIR"):
        dirs.append(Path(os.environ["CAMP_BUILD_DIR"]).resolve())
    # Installed with the package (pip install .); an editable install keeps them in
    # site-packages while the Python files stay here, so ask importlib where _lib is.
    package = importlib.resources.files("operator_runtime")
    dirs += [Path(str(p)) for p in package.iterdir() if p.name == "_lib"]
    return dirs


_found: dict[str, Path] = {}


def find_library(backend: str) -> Path | None:
    """The backend's library file, searched once per process (a walk of the package directory
    and a stat per candidate: ~75 us, too much for every call). A library not found is
    searched for again next time, so one built while the process runs is found."""
    path = _found.get(backend)
    if path is None:
        for directory in library_dirs():
            candidate = directory / f"liboprt_{backend}.so"
            if candidate.is_file():
                path = _found[backend] = candidate
                break
    return path


_loaded: dict[str, ctypes.CDLL] = {}


def load_library(backend: str) -> ctypes.CDLL:
    """The backend's library, loaded once per process."""
    if backend not in _loaded:
        path = find_library(backend)
        if path is None:
            searched = ", ".join(str(d) for d in library_dirs())
            raise BackendUnavailableError(
                f"liboprt_{backend}.so was not built (searched {searched}); build it with "
                f"`pip install .` or cmake and set CAMP_BUILD_DIR to the build directory"
            )
        lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)
        lib.oprt_last_error.restype = ctypes.c_char_p
        lib.oprt_backend_name.restype = ctypes.c_char_p
        _loaded[backend] = lib
    return _loaded[backend]


def check_status(lib: ctypes.CDLL, function: str, code: int) -> None:
    if code != 0:
        name = STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else "UNKNOWN"
        message = lib.oprt_last_error().decode(errors="replace")
        raise OperatorRuntimeError(function, code, name, message)
