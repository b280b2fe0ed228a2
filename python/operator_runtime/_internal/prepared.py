"""What every prepared operator shares, whichever backend runs it (binding.PreparedOp for the C
libraries, tilelang_backend.TileLangPrepared for TileLang's kernels)."""

from __future__ import annotations

import torch

from . import checks


def layout_of(t: torch.Tensor) -> tuple:
    """What a prepared tensor's replacement must match: shape, strides, dtype and device."""
    return tuple(t.shape), t.stride(), t.dtype, t.device


class PreparedBase:
    """What every prepared operator shares, whatever runs it: the prepared tensors (kept
    referenced so their memory outlives the kernel's use of it), the checks on new
    buffers passed to run(), and closing as a context manager."""

    def __init__(self, op: str, input_names: tuple[str, ...], out: torch.Tensor, inputs: tuple[torch.Tensor, ...],
                 in_place_ok: bool):
        self.op, self._names, self._in_place_ok = op, input_names, in_place_ok
        self.out, self.inputs = out, inputs
        self._layouts = [layout_of(t) for t in (out, *inputs)]

    def _swap(self, inputs, out):
        """New buffers for one run(): same layout as prepared, out not overlapping an input."""
        names = self._names
        if inputs and len(inputs) != len(names):
            raise TypeError(f"prepared {self.op}.run takes {len(names)} inputs ({', '.join(names)}), got {len(inputs)}")
        inputs = inputs or self.inputs
        out = self.out if out is None else out
        for name, t, want in zip(("out",) + names, (out,) + tuple(inputs), self._layouts):
            checks.float_tensor(self.op, name, t)
            if layout_of(t) != want:
                raise ValueError(
                    f"prepared {self.op}: {name} must match the prepared shape, strides, dtype and device "
                    f"{want}, got {layout_of(t)}"
                )
        checks.disjoint_from_out(self.op, out, dict(zip(names, inputs)), self._in_place_ok)
        return tuple(inputs), out

    def close(self) -> None:
        self.out = self.inputs = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
