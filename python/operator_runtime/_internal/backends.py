"""Backends: which exist, which can run here, and which one a call uses (re-exported by the
public operator_runtime.backend).

A call's backend defaults from its tensors' device (``cpu`` tensors -> ``cpu``, ``cuda``
tensors -> ``nvidia``); ``backend=`` picks another that runs on that device.
"""

from __future__ import annotations

import importlib.util

import torch

from ..errors import BackendUnavailableError
from .native import find_library

BACKENDS = ("cpu", "nvidia", "tilelang", "metax")

# The torch device types each backend's kernels run on.
BACKEND_DEVICE = {"cpu": ("cpu",), "nvidia": ("cuda",), "tilelang": ("cuda", "cpu"), "metax": ("cuda",)}
DEFAULT_BACKEND = {"cpu": "cpu", "cuda": "nvidia"}

METAX_STUB = (
    "the metax backend is a stub: it needs MetaX GPUs and the MACA toolchain (mxcc), and no MACA "
    "kernels exist yet; see runtime/metax/README.md"
)


_installed = False


def installed() -> bool:
    """Whether tilelang can be imported; once found, not searched for again (find_spec walks
    sys.path: a cost on every call). Not finding it is not remembered."""
    global _installed
    if not _installed:
        _installed = importlib.util.find_spec("tilelang") is not None
    return _installed


def is_available(backend: str) -> bool:
    """True when this machine can run the backend's kernels now."""
    if backend == "cpu":
        return find_library("cpu") is not None
    if backend == "nvidia":
        return find_library("nvidia") is not None and torch.cuda.is_available()
    if backend == "tilelang":
        return installed()
    return False


def available_backends() -> list[str]:
    return [b for b in BACKENDS if is_available(b)]


def resolve_backend(op: str, tensors: dict[str, torch.Tensor], backend: str | None) -> str:
    """The backend for a call on ``tensors``; raises naming the argument that does not fit."""
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"{op}: backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    devices = {name: t.device for name, t in tensors.items()}
    if len(set(devices.values())) > 1:
        where = ", ".join(f"{name} on {device}" for name, device in devices.items())
        raise ValueError(f"{op}: all tensors must be on one device, got {where}")
    device = next(iter(devices.values()))
    if backend is None:
        if device.type not in DEFAULT_BACKEND:
            raise ValueError(f"{op}: no backend runs on {device} tensors (cpu and cuda are supported)")
        backend = DEFAULT_BACKEND[device.type]
    if backend == "metax":
        raise BackendUnavailableError(f"{op}: {METAX_STUB}")
    if device.type not in BACKEND_DEVICE[backend]:
        name = next(iter(devices))
        raise ValueError(
            f"{op}: backend {backend!r} runs on {' or '.join(BACKEND_DEVICE[backend])} tensors, but {name} is on {device}"
        )
    if backend == "tilelang" and not is_available("tilelang"):
        raise BackendUnavailableError(f"{op}: the tilelang backend needs the tilelang package (pip install tilelang)")
    if backend == "nvidia" and find_library("nvidia") is None:
        raise BackendUnavailableError(f"{op}: the nvidia backend was not built (nvcc was not found at build time)")
    return backend
