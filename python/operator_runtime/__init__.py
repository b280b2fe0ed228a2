"""Operator Runtime: a small GPU operator library with PyTorch conventions.

    import operator_runtime as ort
    y = ort.softmax(x, dim=-1)                 # backend from x.device
    ort.softmax(x, dim=-1, out=y)              # write into y
    with ort.prepare_softmax(y, x, dim=-1) as p:
        p.run()                                # steady state: no re-validation
"""

from .backend import BACKENDS, available_backends, is_available
from .errors import BackendUnavailableError, OperatorRuntimeError, UnsupportedError
from .ops import (OPS, copy, matmul, prepare_copy, prepare_matmul, prepare_reduce_sum,
                  prepare_scaled_dot_product_attention, prepare_softmax, prepare_vector_add, reduce_sum,
                  scaled_dot_product_attention, softmax, vector_add)

__version__ = "0.1.0"

__all__ = ["BACKENDS", "OPS", "available_backends", "is_available", "BackendUnavailableError",
           "OperatorRuntimeError", "UnsupportedError", "copy", "prepare_copy", "vector_add", "prepare_vector_add", "reduce_sum",
           "prepare_reduce_sum", "softmax", "prepare_softmax", "matmul", "prepare_matmul",
           "scaled_dot_product_attention", "prepare_scaled_dot_product_attention"]
