"""TileLang as the runtime uses it, for code outside the runtime that compiles TileLang programs of
its own (the labs' checks and the grader): the dtype names of torch's dtypes, and the tilelang
package imported with its per-compile log lines kept off stdout (a notebook's outputs must not
change because a kernel was compiled)."""

from ._internal.tilelang_backend import TL_DTYPES
from ._internal.tilelang_backend import _tilelang as import_tilelang

__all__ = ["TL_DTYPES", "import_tilelang"]
