"""Public operator bindings: each op has an out-of-place / out= form and a prepare_ form."""

import importlib

from .copy import copy, prepare_copy
from .matmul import matmul, prepare_matmul
from .reduce_sum import prepare_reduce_sum, reduce_sum
from .scaled_dot_product_attention import prepare_scaled_dot_product_attention, scaled_dot_product_attention
from .softmax import prepare_softmax, softmax
from .vector_add import prepare_vector_add, vector_add

OPS = ("copy", "vector_add", "reduce_sum", "softmax", "matmul", "scaled_dot_product_attention")

__all__ = ["OPS", "copy", "prepare_copy", "vector_add", "prepare_vector_add", "reduce_sum",
           "prepare_reduce_sum", "softmax", "prepare_softmax", "matmul", "prepare_matmul",
           "scaled_dot_product_attention", "prepare_scaled_dot_product_attention"]

# Each op's C signature, by op name (the modules are shadowed by their functions above).
SIGNATURES = {op: importlib.import_module(f"{__name__}.{op}").SIGNATURE for op in OPS}
