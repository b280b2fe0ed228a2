"""The shape of one operator's record: what the course's tests, labs, chapter steps and
benchmarks know about an operator, in one place (one file per operator next to this one).

What the runtime itself needs (the C name, input names, attribute types, how the TileLang
backend maps a call) is the runtime's: ``operator_runtime/ops/<op>.py``'s ``SIGNATURE``. The
record reads it (``signature``) and never repeats it. What an operator computes is here once, for
the public call (``torch_call``, ``reference_call``, ``extra_atol_call``, its FLOPs): the runtime's
tests and benchmarks use it as it is, the labs through ``lab_attrs`` (a lab's call: the last dim
of a row op). Only the test cases themselves are ``tests/cases/<op>.py`` (the OpInfo table).

Shapes here follow the labs' convention: element-wise ops take 1-d lengths, row ops
(rows, row_len) reduced or normalised over the last dim, matmul (M, N, K) with A (M, K) and B (K, N),
attention (B, H, S, D) with query, key, value and out all (B, H, S, D).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

# how a lab or step kernel sees its tensors; "attention": query, key and value (B, H, S, D), out the same
KINDS = ("elementwise", "rows", "matmul", "attention")


@dataclass(frozen=True)
class CudaLab:
    """The fixed C entry point ``lab_<op>_<dtype>(pointers..., sizes..., stream)`` that calls a lab's
    (or a chapter step's) CUDA kernel: cuda/cuda_build.py writes it from these parts."""
    pointers: tuple[str, ...]          # the inputs' pointer names, then the output's
    sizes: tuple[str, ...]             # int64_t size arguments after the pointers
    empty: str                         # the C condition under which there is nothing to launch
    launch: str                        # the lab's grid and launch of ``<op>_kernel<T>`` (C, after the guard)
    # element-wise labs: the most blocks the launcher starts (GRID_CAP in ``launch``); the CPU check starts
    # far fewer (cuda_cpu_runtime's grid_cap), so that a kernel that does not loop fails on small inputs too
    grid_cap: int = 0

    @property
    def params(self) -> str:
        *inputs, out = self.pointers
        return "(" + ", ".join([f"const void* {p}" for p in inputs] + [f"void* {out}"]
                               + [f"int64_t {s}" for s in self.sizes] + ["void* stream"]) + ")"

    @property
    def casts(self) -> str:
        """The launch arguments: typed pointers, then the sizes (a step's ``launch<T>(...)`` takes these)."""
        *inputs, out = self.pointers
        return ", ".join([f"(const T*){p}" for p in inputs] + [f"(T*){out}"] + list(self.sizes))


@dataclass(frozen=True, kw_only=True)
class Operator:
    name: str
    kind: str                                   # one of KINDS
    # tests/runtime/test_c_contract.py: the attributes of a valid create, and the views of a valid call
    # around a 2-d shape (its first input's): shape -> (out, [inputs])
    contract_attrs: tuple
    contract_shapes: Callable[[tuple], tuple[tuple, list[tuple]]]
    # attributes create must refuse with OPRT_STATUS_BAD_ATTRIBUTE around a (4, 6) input: (attrs, message)
    contract_bad_attrs: tuple = ()
    # the labs (lab/cases.py, lab/judge.py, lab/checks.py): inputs every check draws, the shape a
    # performance check times, the inputs' and the output's shapes for a lab shape
    lab_shapes: tuple[tuple, ...]
    # (the grader's own shapes, beyond these, are the instructor's: labs/secret_shapes.py, never installed)
    bench_shape: tuple
    input_shapes: Callable[[tuple], list[tuple]]
    output_shape: Callable[[tuple], tuple]
    # the public call (ort.<op>(*inputs, **attrs)): torch's op writing into out (softmax's allocates: it
    # has no out= form), the peer of every benchmark and timing; the float64 answer on the inputs'
    # device; how far float32 accumulation may drift beyond tolerances.py's atol (None: not at all)
    torch_call: Callable[..., torch.Tensor]
    reference_call: Callable[..., torch.Tensor]
    extra_atol_call: Callable[..., object] | None = None
    # FLOPs of one call on its inputs: per element of the first input, or (matmul) counted by flops_call
    flops_per_element: int = 0
    flops_call: Callable[[list], int] | None = None
    lab_attrs: dict = field(default_factory=dict)  # a lab's call: {} or the row ops' {"dim": -1}
    cuda: CudaLab
    cuda_sizes: Callable[[list], tuple[int, ...]]  # the entry point's sizes (cuda.sizes) for these inputs
    flops: Callable[[tuple], int] | None = None  # compute-bound ops: FLOPs of a lab shape (timed in FLOP/s)
    # how a result is judged (with tolerances.py's per-dtype rtol and atol): bit-equal to torch, or
    # within atol widened by extra_atol_call (float32 accumulation of sums)
    exact: bool = False
    special_shape: tuple | None = None          # rows of numerically hard values drawn as well
    # (device, language) -> the dtypes a lab check takes there, where not lab/cases.py's DTYPES[device]
    lab_dtypes: dict = field(default_factory=dict)
    # the chapter's steps (ops/<op>/steps/): language -> the production kernel's title in the
    # charts (an op without steps has none), and the shapes scripts/step_bench.py times
    production: dict = field(default_factory=dict)
    step_bench_shapes: tuple[tuple, ...] = ()
    # the tilelang backend's limits the tests expect (tests/cases/spec.py): the refusals (regexes of
    # Case.tilelang) that only its GPU kernel makes; on the GPU, dtypes outside (dtypes, message)
    tilelang_gpu_only: tuple[str, ...] = ()
    tilelang_dtypes: tuple | None = None
    # the lab judge's words for this operator's own mistakes (lab/judge.py, beside its generic ones):
    # situation -> {language: hint}. Situations the judge knows: "past_end" and "double_write" (the CPU
    # run's faults, lab/judge.HINTS' words unless the record has its own; "past_end_read" for a read, else
    # "past_end"), "unwritten" (outputs left NaN), "empty_rows" (rows of length 0), "row_sums" (rows that
    # must sum to 1 do not); a matmul kind's "precision", "edge_tile", "edge_unwritten", "k_tail", "later_tiles",
    # "k_zero", "zeros", "unwritten_all" (lab/judge._matmul_hints); for batched matrices
    # (attention) "late_rows", "early_rows" (lab/judge._positions_hint) and "special" (its special input
    # of large values: lab/cases.LARGE_INPUTS), and the names of its alternatives (below)
    hints: dict = field(default_factory=dict)
    special_rows: dict = field(default_factory=dict)  # special_shape's rows: row -> what a wrong one says
    # a lab's call with other attributes, each a mistake the judge recognises by its result: situation ->
    # attrs over lab_attrs (attention: {"no_scale": {"scale": 1.0}}), or a function of the inputs returning
    # them; a wrong output that matches one is named with hints[situation] (lab/judge._alternative)
    alternatives: dict = field(default_factory=dict)

    def __post_init__(self):
        assert self.kind in KINDS, f"{self.name}: kind must be one of {KINDS}, not {self.kind!r}"

    @property
    def signature(self):
        """The runtime's OpSignature (operator_runtime/ops/<op>.py)."""
        from operator_runtime.ops import SIGNATURES

        return SIGNATURES[self.name]

    def reference(self, *inputs: torch.Tensor) -> torch.Tensor:
        """torch's float64 answer for a lab's call on these inputs."""
        return self.reference_call(*inputs, **self.lab_attrs)

    def reference_with(self, inputs: list, **attrs) -> torch.Tensor:
        """torch's float64 answer for a lab's call with ``attrs`` changed (an alternative's)."""
        return self.reference_call(*inputs, **{**self.lab_attrs, **attrs})

    def torch_op(self, out: torch.Tensor, *inputs: torch.Tensor) -> torch.Tensor:
        """torch's op for a lab's call, writing into ``out`` where it can (the timing peer)."""
        return self.torch_call(out, *inputs, **self.lab_attrs)

    def extra_atol(self, inputs: list) -> object:
        """The atol widening of a lab's call on these inputs (0.0 for an op that sums nothing)."""
        return self.extra_atol_call(*inputs, **self.lab_attrs) if self.extra_atol_call else 0.0

    def call_flops(self, inputs: list, attrs: dict | None = None) -> int:
        """FLOPs of one public call on ``inputs`` with ``attrs`` (attention's is_causal halves them)."""
        return self.flops_call(inputs, **(attrs or {})) if self.flops_call else self.flops_per_element * inputs[0].numel()

    @property
    def inputs(self) -> int:
        return len(self.signature.inputs)

    @property
    def has_steps(self) -> bool:
        return bool(self.production)
