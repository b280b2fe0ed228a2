"""The shape of one operator's record: what the course's tests, labs, chapter steps and
benchmarks know about an operator, in one place (one file per operator next to this one).

What the runtime itself needs (the C name, input names, attribute types, how the TileLang
backend maps a call) is the runtime's: ``operator_runtime/ops/<op>.py``'s ``SIGNATURE``. The
record reads it (``signature``) and never repeats it. The test cases, their float64 reference and
tolerances are ``tests/cases/<op>.py`` (the OpInfo table); the benchmark's torch peer and FLOPs,
``tests/bench/<op>.py``.

Shapes here follow the labs' convention: element-wise ops take 1-d lengths, row ops
(rows, row_len) reduced or normalised over the last dim, matmul (M, N, K) with A (M, K) and B (K, N).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

KINDS = ("elementwise", "rows", "matmul")  # how a lab or step kernel sees its tensors


@dataclass(frozen=True)
class CudaLab:
    """The fixed C entry point ``lab_<op>_<dtype>(pointers..., sizes..., stream)`` that calls a lab's
    (or a chapter step's) CUDA kernel: cuda/cuda_build.py writes it from these parts."""
    pointers: tuple[str, ...]          # the inputs' pointer names, then the output's
    sizes: tuple[str, ...]             # int64_t size arguments after the pointers
    empty: str                         # the C condition under which there is nothing to launch
    launch: str                        # the lab's grid and launch of ``<op>_kernel<T>`` (C, after the guard)

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
    # the grader's own shapes, drawn per run from its secret seed (a random.Random), beyond every grid or
    # loop bound a student could hard-code from the public lab_shapes (lab/judge.lab_cases)
    secret_shapes: Callable[[object], tuple[tuple, ...]]
    bench_shape: tuple
    input_shapes: Callable[[tuple], list[tuple]]
    output_shape: Callable[[tuple], tuple]
    reference: Callable[..., torch.Tensor]      # float64 inputs -> torch's answer (last dim for row ops)
    torch_op: Callable[..., torch.Tensor]       # (out, *inputs): torch's op writing into out, the timing peer
    cuda: CudaLab
    cuda_sizes: Callable[[list], tuple[int, ...]]  # the entry point's sizes (cuda.sizes) for these inputs
    flops: Callable[[tuple], int] | None = None  # compute-bound ops: FLOPs of one call (timed in FLOP/s)
    # how a lab result is judged (lab/judge.py, with tolerances.py's per-dtype rtol and atol): bit-equal
    # to torch, or within atol widened by ``extra_atol(inputs, shape)`` (float32 accumulation of sums)
    exact: bool = False
    extra_atol: Callable[[list, tuple], object] | None = None
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

    def __post_init__(self):
        assert self.kind in KINDS, f"{self.name}: kind must be one of {KINDS}, not {self.kind!r}"

    @property
    def signature(self):
        """The runtime's OpSignature (operator_runtime/ops/<op>.py)."""
        from operator_runtime.ops import SIGNATURES

        return SIGNATURES[self.name]

    @property
    def inputs(self) -> int:
        return len(self.signature.inputs)

    @property
    def has_steps(self) -> bool:
        return bool(self.production)
