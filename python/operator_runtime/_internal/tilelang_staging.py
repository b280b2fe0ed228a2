"""Matmul operands that TileLang's matmul program cannot take as they are, staged through buffers it can.

The program (ops/matmul/tilelang/matmul.py) reads contiguous operands; on a GPU its TMA copies also
need 16-byte rows (K and N multiples of 8, 16-byte aligned pointers) and one batch for a and b. A
transposed weight, an offset view, a vocabulary of 50257 or a batch broadcast is none of these, and
such calls were refused. Here the operands that are not so are copied into buffers that are: a as
(batch, M, K8), b as (batch, K8, N8) and the product as (batch, M, N8), with K8, N8 the next
multiples of 8 (of 1 on the CPU, whose C kernel loads element by element); the others are read as
they are (staged_operands). The pads are zeroed once, when the buffers are made, and the copies on
each run write only the operands' own elements, so the padded K adds zero products and the padded
columns of the product are never copied out. Each copy costs a pass over its operand: a few percent
of a matmul whose sizes run to the thousands, more for a decode-sized one, and a refusal was the
alternative.
"""

from __future__ import annotations

from typing import Callable

import torch

from .prepared import PreparedBase

ROW = 8  # elements in 16 bytes of a 16-bit dtype: the TMA copies' row granularity


def _round_up(x: int, to: int) -> int:
    return (x + to - 1) // to * to


def staged_shapes(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, gpu: bool) -> tuple[tuple, tuple, tuple]:
    """The staged a, b and out shapes (3-d: batch, rows, columns) for a (batch,) M x K @ K x N call."""
    batch = out.shape[0] if out.dim() == 3 else 1
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    row = ROW if gpu else 1
    k8, n8 = _round_up(k, row), _round_up(n, row)
    return (batch, m, k8), (batch, k8, n8), (batch, m, n8)


def staged_operands(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, gpu: bool) -> tuple[bool, bool, bool]:
    """Which of a, b and out are copied: each one the program cannot read as it is (not contiguous; on a
    GPU also a pointer off 16 bytes, or a batch other than out's, which the TMA copies index by), and
    both a and b when K must be padded, both b and out when N must be (a x @ W.t() of aligned sizes
    copies W alone)."""
    row = ROW if gpu else 1
    pad_k, pad_n = a.shape[-1] % row != 0, b.shape[-1] % row != 0
    batch = out.shape[0] if out.dim() == 3 else 1

    def unreadable(t: torch.Tensor) -> bool:
        if not t.is_contiguous():
            return True
        return gpu and ((t.numel() and t.data_ptr() % 16 != 0) or (t.shape[0] if t.dim() == 3 else 1) != batch)

    return unreadable(a) or pad_k, unreadable(b) or pad_k or pad_n, unreadable(out) or pad_n


class StagedMatmul(PreparedBase):
    """A prepared tilelang matmul through staged buffers: run() copies into them the operands the
    program cannot read as they are (staged_operands), runs the program's own prepared op
    (``prepare_staged(out, a, b)``, over the buffers and the operands that need none), and copies the
    product to out if it was staged. Not kept by the eager plan cache (detach_plan gives nothing):
    each eager call prepares again, and the buffers are freed with it."""

    backend = "tilelang"

    def __init__(self, signature, out: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
                 prepare_staged: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], object], gpu: bool | None = None):
        super().__init__(signature.name, signature.inputs, out, (a, b), signature.in_place_ok)
        gpu = out.device.type == "cuda" if gpu is None else gpu  # (a test stages as for a GPU on the CPU)
        shapes = staged_shapes(out, a, b, gpu)
        self._k, self._n = a.shape[-1], b.shape[-1]
        # a copy per staged operand (the pads zeroed once, and never written again), else None
        self._a, self._b, self._out = [
            (torch.zeros if name != "out" else torch.empty)(shape, dtype=t.dtype, device=t.device) if staged else None
            for name, t, shape, staged in zip(("a", "b", "out"), (a, b, out), shapes, staged_operands(out, a, b, gpu))]
        self.workspace_bytes = sum(t.numel() * t.element_size() for t in (self._a, self._b, self._out) if t is not None)
        self._inner = prepare_staged(*self._kernel_operands(out, a, b))
        self._closed = False

    def _kernel_operands(self, out, a, b) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """out, a and b as the program sees them: each one's copy, or itself."""
        return (out if self._out is None else self._out, a if self._a is None else self._a,
                b if self._b is None else self._b)

    def run(self, *inputs: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        if self._closed:
            raise RuntimeError(f"prepared {self.op} is closed")
        new = bool(inputs) or out is not None
        (a, b), out = self._swap(inputs, out) if new else (self.inputs, self.out)
        k, n = self._k, self._n
        if self._a is not None:
            self._a[..., :k].copy_(a)  # a 2-d operand or a batch of 1 repeats over the batch (torch's broadcast)
        if self._b is not None:
            self._b[..., :k, :n].copy_(b)
        if new:  # the operands it reads as they are may be new buffers too
            kernel_out, kernel_a, kernel_b = self._kernel_operands(out, a, b)
            self._inner.run(kernel_a, kernel_b, out=kernel_out)
        else:
            self._inner.run()
        if self._out is not None:
            out.copy_(self._out[..., :n] if out.dim() == 3 else self._out[0, :, :n])
        return out

    def detach_plan(self):
        self.close()
        return None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._inner.close()
            self._a = self._b = self._out = None
        super().close()

    def __repr__(self) -> str:
        return f"<prepared {self.op} on tilelang (staged): {'closed' if self._closed else tuple(self._layouts[0][0])}>"
