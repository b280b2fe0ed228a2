"""The laptop's speed estimate (lab/estimate.py, issue 28): the CPU execution path counts each warp
request's 32-byte sectors, the atomics by address and the threads that work (runtime.cpp:
cuda_cpu_profile), and a model of an H200 turns them into a predicted fraction of its copy
bandwidth at the benchmark shape, printed beside "performance: needs a GPU". Every lab solution is
predicted fast; kernels that pass every laptop check yet crawl on a GPU (a thread per contiguous
chunk, one thread per softmax row, an atomicAdd per element) are predicted slow, with their hint.

The path is forced (torch.cuda.is_available() patched to False), so a GPU machine tests it too."""

from __future__ import annotations

import shutil

import pytest
import torch

from labs.solutions import cuda_solutions
from operator_course import lab
from operator_course.cuda import cuda_cpu
from operator_course.lab import estimate
from labs.slow_kernels import ATOMIC_REDUCE, SLOW


pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the CPU path builds kernels with g++")


def solutions() -> dict[str, str]:
    return cuda_solutions()


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.mark.parametrize("op", ["copy", "vector_add", "reduce_sum", "softmax"])
def test_every_lab_solution_is_predicted_fast(op):
    e = estimate.estimate(op, solutions()[op])
    assert e.fraction >= 0.5, "\n".join(e.lines())
    assert e.lines()[0].startswith("estimate (CPU model of an H200, not a measurement): ")


@pytest.mark.parametrize("name", list(SLOW))
def test_slow_kernels_are_predicted_slow_with_their_hint(name):
    op, source, says = SLOW[name]
    e = estimate.estimate(op, source)
    text = "\n".join(e.lines())
    assert e.fraction < 0.2, text
    for fragment in says:
        assert fragment in e.hint, f"{fragment!r} not in:\n{text}"


@pytest.mark.parametrize("name", ["strided_copy", "row_per_thread_softmax"])
def test_the_cpu_path_prints_the_estimate_beside_needs_a_gpu(name, no_gpu, capsys):
    op, source, says = SLOW[name]
    lab.check_cuda(op, source, compile_for_gpu=False)  # every laptop check passes it: the complaint
    lab.check_performance(op, source, fraction=0.5)
    out = capsys.readouterr().out.splitlines()
    at = out.index(f"{op} performance: needs a GPU")
    assert out[at + 1].startswith("estimate (CPU model of an H200, not a measurement): ")
    assert says[0] in out[at + 2]
    assert "0.50x torch's speed" in out[-1] and len(out) - at - 1 <= 4


def test_a_compute_bound_lab_gets_no_estimate():
    assert "none for a compute-bound kernel" in estimate.lines("matmul", solutions()["matmul"])[0]


def test_a_wrong_kernel_gets_no_estimate():
    source = solutions()["copy"].replace("base < n;", "base < n / 2;")
    (line,) = estimate.lines("copy", source)
    assert line.startswith("estimate (CPU model of an H200, not a measurement): not available (copy (CUDA) is wrong")


# ---- the runtime's counters themselves ----

STRIDE_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i * STRIDE < n) y[i] = x[i * STRIDE];
}
"""


def _records(report: str) -> list[dict]:
    return [cuda_cpu._fields(ln) for ln in report.splitlines() if ln.strip()]


@pytest.mark.parametrize("stride, sectors", [(1, 4), (2, 8), (8, 32), (64, 32)])
def test_a_warp_request_counts_its_distinct_sectors(stride, sectors):
    """Lanes of a warp run one after the other on the CPU; the k-th execution of a site by each lane
    is one warp request: 32 float loads `stride` elements apart touch min(32, 4 * stride) sectors."""
    source = STRIDE_SOURCE.replace("STRIDE", str(stride))
    lib, _ = cuda_cpu.build_library("copy", source)
    kernel = cuda_cpu.CpuLab("copy", lib, source)
    n = 65536
    x, y = torch.randn(n), torch.zeros(n)
    records = _records(kernel.profile([x], y, "copy"))
    totals = next(r for r in records if r["kind"] == "totals")
    assert int(totals["blocks"]) == 256 and int(totals["active_threads"]) == n // stride and int(totals["span"]) == 2
    sites = {r["rw"]: r for r in records if r["kind"] == "site"}
    load, store = sites["read"], sites["write"]
    assert int(load["sectors"]) == sectors * int(load["instances"]) and int(load["lanes"]) == 32 * int(load["instances"])
    assert int(load["stride"]) == 4 * stride and int(load["buf"]) == 0
    assert int(store["sectors"]) == 4 * int(store["instances"]) and int(store["buf"]) == 1
    assert int(load["accesses"]) == n // stride  # every block counted; the sectors from the first 64
    assert torch.equal(y[: n // stride], x[::stride])  # and the run is the ordinary one


def test_atomics_are_counted_by_address_and_launches_recorded_without_running():
    lib, _ = cuda_cpu.build_library("reduce_sum", ATOMIC_REDUCE)
    kernel = cuda_cpu.CpuLab("reduce_sum", lib, ATOMIC_REDUCE)
    x, y = torch.randn(5, 1000), torch.zeros(5)
    records = _records(kernel.profile([x], y, "reduce_sum"))
    atomics = next(r for r in records if r["kind"] == "atomics")
    assert (atomics["count"], atomics["addresses"], atomics["max_per_address"], atomics["line"]) == ("5000", "5", "1000", "7")
    assert torch.allclose(y, x.sum(1), atol=1e-3)
    # the benchmark shape's launch: recorded, the kernel never runs (meta tensors have no memory)
    dry = _records(kernel.launches([torch.empty(8192, 8192, device="meta")]))
    assert [r for r in dry if r["kind"] == "launch"] == [{"kind": "launch", "grid": "8192,1,1", "block": "256,1,1",
                                                           "shared": "0"}]
