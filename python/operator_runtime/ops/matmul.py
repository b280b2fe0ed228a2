"""matmul: ``a @ b`` with torch.matmul's semantics, accumulated in f32.

The kernels (the C contract) take 2-d (M, K) @ (K, N) and batched 3-d (B, M, K) @ (B, K, N)
operands, a 2-d operand or a batch of 1 repeating over the other's batch. Everything else
torch.matmul accepts is mapped onto that form here, as views: a 1-d a is a (1, K) row and a 1-d
b a (K, 1) column (the dim is dropped from the result), and batch dims that broadcast are
expanded to one shape and flattened into one batch dim (a copy only where an expanded operand
cannot be viewed so: a prepared op then copies it again on every run, so it sees the data of
that moment)."""

from __future__ import annotations

import torch

from .._internal import OpSignature, PreparedOp, bind_prepared, checks, run_eager

SIGNATURE = OpSignature("matmul", inputs=("a", "b"), tilelang="tiles")


def matmul(a: torch.Tensor, b: torch.Tensor, *, out: torch.Tensor | None = None,
           backend: str | None = None) -> torch.Tensor:
    """``a @ b`` as torch.matmul computes it: (M, K) @ (K, N) -> (M, N); 1-d operands (a vector
    on either side, or both: a dot product); batch dims that broadcast ((..., M, K) @ (..., K, N)).
    a and b share a dtype."""
    if _kernel_form(a, b):  # the kernels' own form: the eager fast path, nothing to map
        if out is None:  # (with out given, the checks run once per layout: see plan_cache._key)
            a, b = checks.float_tensor("matmul", "a", a), checks.float_tensor("matmul", "b", b)
            out = torch.empty(_result_shape(a, b), dtype=a.dtype, device=a.device)
        return run_eager(SIGNATURE, out, (a, b), (), backend, prepare_matmul)
    a, b = checks.float_tensor("matmul", "a", a), checks.float_tensor("matmul", "b", b)
    form = _Mapped(a, b)
    if out is None:
        out = torch.empty(form.shape, dtype=a.dtype, device=a.device)
    else:
        out = checks.float_tensor("matmul", "out", out)
        checks.out_like("matmul", out, form.shape, a.dtype)
    kernel_out = form.out_view(out)
    result = kernel_out if kernel_out is not None else torch.empty(form.kernel_shape, dtype=a.dtype, device=a.device)
    run_eager(SIGNATURE, result, (form.a, form.b), (), backend, _prepare_kernel_form)
    if kernel_out is None:  # out's layout cannot be viewed in the kernel's form
        out.copy_(result.view(form.shape))
    return out


def prepare_matmul(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *,
                   backend: str | None = None) -> PreparedOp:
    a, b = checks.float_tensor("matmul", "a", a), checks.float_tensor("matmul", "b", b)
    out = checks.float_tensor("matmul", "out", out)
    if _kernel_form(a, b):
        return _prepare_kernel_form(out, a, b, backend=backend)
    form = _Mapped(a, b)
    checks.out_like("matmul", out, form.shape, a.dtype)
    inner = bind_prepared(SIGNATURE, form.kernel_out(out), {"a": form.a, "b": form.b}, (), backend)
    return _MappedPrepared(inner, form, out, a, b)


def _prepare_kernel_form(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *, backend: str | None = None) -> PreparedOp:
    """The kernels' own prepared op for operands already in their form (2-d and 3-d) and already checked
    by the caller: never mapped again, also where a mapped operand (a copy, now contiguous) could be folded."""
    checks.out_like("matmul", out, _result_shape(a, b), a.dtype)
    return bind_prepared(SIGNATURE, out, {"a": a, "b": b}, (), backend)


class _MappedPrepared:
    """A prepared matmul of operands outside the kernels' form (prepare_matmul): run() with new
    buffers views them as the first ones were viewed, and the kernels' prepared op checks them; an
    operand that had to be copied into the kernels' form is copied again on every run."""

    def __init__(self, inner: PreparedOp, form: "_Mapped", out: torch.Tensor, a: torch.Tensor, b: torch.Tensor):
        self._inner, self._shape, self._copied = inner, form.shape, form.copied
        self.op, self.backend, self.workspace = "matmul", inner.backend, getattr(inner, "workspace", None)
        self.out, self.inputs = out, (a, b)

    def run(self, *inputs: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        if self.out is None:
            raise RuntimeError("prepared matmul is closed")
        if not inputs and out is None and not self._copied:
            self._inner.run()
            return self.out
        if inputs and len(inputs) != 2:
            raise TypeError(f"prepared matmul.run takes 2 inputs (a, b), got {len(inputs)}")
        a, b = inputs or self.inputs
        out = self.out if out is None else out
        form = _Mapped(checks.float_tensor("matmul", "a", a), checks.float_tensor("matmul", "b", b))
        if form.shape != self._shape or tuple(out.shape) != tuple(self._shape):
            raise ValueError(f"prepared matmul: the inputs and out must match the prepared shapes (result "
                             f"{tuple(self._shape)}), got a {tuple(a.shape)}, b {tuple(b.shape)}, out {tuple(out.shape)}")
        self._inner.run(form.a, form.b, out=form.kernel_out(out))
        return out

    def close(self) -> None:
        self._inner.close()
        self.out = self.inputs = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<prepared matmul {tuple(self._shape)} on {self.backend}{': closed' if self.out is None else ''}>"


def _kernel_form(a, b) -> bool:
    """Operands the kernels take as they are: 2-d and 3-d, but a batch of matrices times one matrix
    that _Mapped can fold into one matrix product."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and 2 <= a.dim() <= 3 and 2 <= b.dim() <= 3):
        return False
    one_matrix = b.dim() == 2 or b.shape[0] == 1
    return not (a.dim() == 3 and one_matrix and _Mapped._fold(a) is not None)


class _Mapped:
    """a @ b in the kernels' form: ``a``, ``b`` (2-d or 3-d), ``kernel_shape`` (their product's),
    and ``shape``, torch.matmul's result."""

    def __init__(self, a: torch.Tensor, b: torch.Tensor):
        for name, t in (("a", a), ("b", b)):
            if t.dim() == 0:
                raise ValueError(f"matmul: {name} is 0-d; both operands need at least one dim (as in torch.matmul)")
        if a.dtype != b.dtype:
            raise TypeError(f"matmul: a is {a.dtype} but b is {b.dtype}; convert one so they match")
        a2 = a.unsqueeze(0) if a.dim() == 1 else a  # a vector on the left: one row
        b2 = b.unsqueeze(-1) if b.dim() == 1 else b  # on the right: one column
        if a2.shape[-1] != b2.shape[-2]:
            raise ValueError(f"matmul: a {tuple(a.shape)} and b {tuple(b.shape)} do not multiply: a's last dim "
                             f"(K={a2.shape[-1]}) must equal b's {'only' if b.dim() == 1 else 'second-to-last'} "
                             f"dim ({b2.shape[-2]})")
        try:  # (b's batch dims of size 1 count here: they may add leading dims to the result)
            self.batch = tuple(torch.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]))
        except RuntimeError:
            raise ValueError(f"matmul: a {tuple(a.shape)} and b {tuple(b.shape)} have batch dims "
                             f"{tuple(a2.shape[:-2])} and {tuple(b2.shape[:-2])} that do not broadcast") from None
        if b2.dim() > 2 and all(d == 1 for d in b2.shape[:-2]) and a.dim() > 2:
            b2 = b2.view(b2.shape[-2:])  # a batch of one matrix over a's batch: that one matrix
        m, n = a2.shape[-2], b2.shape[-1]
        self.shape = torch.Size(self.batch + ((m,) if a.dim() > 1 else ()) + ((n,) if b.dim() > 1 else ()))
        self.copied = False  # an operand copied: its broadcast batch dims could not be viewed as one
        folded = self._fold(a2) if b2.dim() == 2 and a2.dim() > 2 else None
        if folded is not None:  # a batch of matrices times one matrix: one (batch * M, K) @ (K, N)
            self.a, self.b = folded, b2
            self.kernel_shape = torch.Size((self._count() * m, n))
        else:
            self.a, self.b = self._flat(a2), self._flat(b2)
            self.kernel_shape = torch.Size(((self._count(),) if self.batch else ()) + (m, n))
        self._rows, self._cols = a.dim() > 1, b.dim() > 1

    def _count(self) -> int:
        count = 1
        for d in self.batch:
            count *= d
        return count

    @staticmethod
    def _fold(t: torch.Tensor) -> torch.Tensor | None:
        """(..., M, K) as one (rows, K) matrix where its layout allows a view (no copy), else None."""
        rows = 1
        for d in t.shape[:-1]:
            rows *= d
        try:
            return t.view(rows, t.shape[-1])  # (not -1: an empty K leaves it undetermined)
        except RuntimeError:
            return None

    def _flat(self, t: torch.Tensor) -> torch.Tensor:
        """``t`` with its batch dims expanded to the common ones and flattened into one (a 2-d
        operand stays 2-d: the kernels repeat it over the batch)."""
        if t.dim() == 2 or len(self.batch) <= 1 and t.dim() == 3:
            return t
        full = t.expand(self.batch + tuple(t.shape[-2:]))
        flat = (self._count(),) + tuple(t.shape[-2:])  # (not -1: undetermined when a dim is 0)
        try:
            return full.view(flat)
        except RuntimeError:
            self.copied = True
            return full.reshape(flat)

    def kernel_out(self, out: torch.Tensor) -> torch.Tensor:
        """out_view, or a clear error where out's layout cannot be viewed so (a prepared op binds views)."""
        view = self.out_view(out)
        if view is None:
            raise ValueError(f"prepare_matmul: out {tuple(out.shape)} with strides {out.stride()} cannot be viewed as "
                             f"{tuple(self.kernel_shape)}: pass a contiguous out")
        return view

    def out_view(self, out: torch.Tensor) -> torch.Tensor | None:
        """``out`` (torch.matmul's shape) viewed in the kernels' form, or None where its layout cannot be."""
        v = out if self._cols else out.unsqueeze(-1)
        v = v if self._rows else v.unsqueeze(-2)
        try:
            return v.view(self.kernel_shape)
        except RuntimeError:
            return None


def _result_shape(a: torch.Tensor, b: torch.Tensor) -> torch.Size:
    """The shape of a @ b for the kernels' form; raises naming the operand that does not fit."""
    if a.dtype != b.dtype:
        raise TypeError(f"matmul: a is {a.dtype} but b is {b.dtype}; convert one so they match")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: a {tuple(a.shape)} and b {tuple(b.shape)} do not multiply: a's last dim "
                         f"(K={a.shape[-1]}) must equal b's second-to-last ({b.shape[-2]})")
    batch_a, batch_b = (a.shape[0] if a.dim() == 3 else 1), (b.shape[0] if b.dim() == 3 else 1)
    if batch_a != batch_b and 1 not in (batch_a, batch_b):
        raise ValueError(f"matmul: a {tuple(a.shape)} and b {tuple(b.shape)} have batches {batch_a} and {batch_b} "
                         f"that do not broadcast")
    batch = (max(batch_a, batch_b),) if max(a.dim(), b.dim()) == 3 else ()
    return torch.Size(batch + (a.shape[-2], b.shape[-1]))
