"""Private plumbing: the C libraries (native), argument checks, and the bind_* helpers."""

from .binding import BoundOp, OpSignature, PreparedOp, bind_op, bind_prepared
from .plan_cache import run_eager

__all__ = ["BoundOp", "OpSignature", "PreparedOp", "bind_op", "bind_prepared", "run_eager"]
