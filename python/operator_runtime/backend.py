"""Backends: which exist, which can run here, and which one a call uses (the public names; the
rules live in _internal/backends.py, beside the libraries they look for).

A call's backend defaults from its tensors' device (``cpu`` tensors -> ``cpu``, ``cuda``
tensors -> ``nvidia``); ``backend=`` picks another that runs on that device.
"""

from ._internal.backends import (BACKEND_DEVICE, BACKENDS, DEFAULT_BACKEND, available_backends, is_available,
                                 resolve_backend)

__all__ = ["BACKENDS", "BACKEND_DEVICE", "DEFAULT_BACKEND", "available_backends", "is_available", "resolve_backend"]
