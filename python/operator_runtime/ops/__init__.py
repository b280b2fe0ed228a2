"""Public operator bindings: each op has an out-of-place / out= form and a prepare_ form."""

from .copy import copy, prepare_copy
from .reduce_sum import prepare_reduce_sum, reduce_sum
from .softmax import prepare_softmax, softmax
from .vector_add import prepare_vector_add, vector_add

OPS = ("copy", "vector_add", "reduce_sum", "softmax")

__all__ = ["OPS", "copy", "prepare_copy", "vector_add", "prepare_vector_add", "reduce_sum",
           "prepare_reduce_sum", "softmax", "prepare_softmax"]
