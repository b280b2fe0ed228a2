"""A laptop's speed estimate of a lab's CUDA kernel (issue 28): without a GPU, "performance: needs a
GPU" is all a timing can say, yet the CPU execution path (cuda/cuda_cpu.py) sees every load and
store the kernel makes. From those, a model of an H200 predicts which fraction of its copy bandwidth
the kernel would reach at the benchmark shape the performance check times, and names the biggest
limit. It is labelled for what it is, an estimate: no cache, no instruction cost, no launch cost.

What the CPU run counts (runtime.cpp, cuda_cpu_profile): each static load/store site of the kernel
on a lab buffer; per warp instruction (the k-th execution of a site by the lanes of one warp: lanes
do not run in lockstep there) the distinct 32-byte sectors touched beside the bytes asked for; the
global atomics by address; the threads of each block that touched global memory; and each thread's
number of accesses (the longest is the kernel's span, W / span the threads that work at once).

The run. Not the lab's largest inputs: those of the row labs have two or three rows, i.e. two or
three blocks, where any kernel leaves an H200 idle. Instead the benchmark shape with its first
dimension divided by 64 and by 128 (rows keep their benchmark length; an element-wise kernel its
grid): what scales with the shape (the work, the threads that have some, the atomic addresses) is
carried to the benchmark shape by the law the two runs show (power of the size), the rest (sectors
per request, threads active per block, atomics per address) is taken as it is. The grid of the
benchmark shape is the launcher's own: its entry point runs with the launches recorded, not run.

The model, at the benchmark shape (float32):
  DRAM bytes   = sectors * 32 of every load and store (no cache: a second pass over a row counts
                 again) + ATOMIC_BYTES per atomic;                     time = bytes / COPY_CEILING
  latency      = Little's law: a thread keeps REQUESTS_IN_FLIGHT loads in flight, each waits
                 LATENCY; the threads in flight are those with work (W / span), at most the resident
                 ones (SMS * min(BLOCKS_PER_SM, THREADS_PER_SM / block) blocks, their active threads);
                                                                        time = accesses * LATENCY / (threads * REQUESTS_IN_FLIGHT)
  serialised   = the atomics on the busiest address, one per ATOMIC_SAME_ADDRESS
  predicted fraction = (the op's compulsory bytes / COPY_CEILING) / the longest of the three.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

# ---- an H200 (SXM), the grader's GPU ----
SMS = 132  # streaming multiprocessors of an H200 SXM (NVIDIA H200 datasheet; GH100 as in the H100 SXM5)
THREADS_PER_SM = 2048  # resident threads per SM, compute capability 9.0 (CUDA C++ Programming Guide, "Technical
BLOCKS_PER_SM = 32  # Specifications per Compute Capability"): 64 warps, 32 blocks
PEAK_BANDWIDTH = 4.8e12  # B/s, HBM3e (NVIDIA H200 datasheet)
COPY_CEILING = 4.0e12  # B/s a copy kernel (and torch's copy_) achieves: ~83% of the peak, as HBM does in practice
LATENCY = 600e-9  # s a load waits for DRAM under load: an assumption of the model (microbenchmarks of Hopper
#                   put an idle DRAM access at several hundred ns; queues add to it)
REQUESTS_IN_FLIGHT = 4  # independent loads a thread has in flight (an unrolled loop): 16 B of float32. Full
#                         residency then covers COPY_CEILING * LATENCY = 2.4 MB with ~36 warps per SM
SECTOR = 32  # bytes: what L2 and DRAM move per request (CUDA C++ Best Practices Guide, "Coalesced Access to Global
#              Memory")
ATOMIC_BYTES = SECTOR  # traffic charged per global atomic: a read-modify-write of a sector at L2
CLOCK = 1.98e9  # Hz, H200 SXM boost clock
ATOMIC_SAME_ADDRESS = 1 / CLOCK  # s per atomic on one address: one per clock at best (NVIDIA's Kepler GK110
#                                  whitepaper: atomics to a common address "one operation per clock")
SCALES = (128, 64)  # the benchmark shape's first dimension divided by these: the two CPU runs
LABEL = "estimate (CPU model of an H200, not a measurement)"


@dataclass
class Run:
    """One profiled CPU run: the runtime's records (cuda_cpu.CpuLab.profile), read."""
    shape: tuple
    totals: dict
    launches: list
    sites: list
    atomics: dict
    compulsory: int  # bytes the op must move: its inputs and output once (float32)

    @property
    def work(self) -> int:  # accesses of global memory, atomics included
        return self.totals["accesses"]

    @property
    def parallel(self) -> float:  # threads that work at once, on average: work / span
        return self.work / max(self.totals["span"], 1)

    @property
    def active_per_block(self) -> float:
        return self.totals["active_threads"] / max(self.totals["active_blocks"], 1)


@dataclass
class Estimate:
    op: str
    shape: tuple  # the benchmark shape
    fraction: float
    limit: str  # "memory traffic" | "latency" | "atomics"
    hint: str
    detail: str
    numbers: dict = field(default_factory=dict)

    def lines(self, needs: float | None = None) -> list[str]:
        """2-4 lines: the predicted fraction, the biggest limit's hint, what was counted, and (``needs``:
        the performance check's fraction of torch's speed) what the check asks."""
        share = f"{self.fraction:.2f}" if self.fraction >= 0.095 else f"{self.fraction:.1g}"
        out = [f"{LABEL}: {share} of the H200's copy bandwidth ({COPY_CEILING / 1e12:.1f} TB/s) at the benchmark "
               f"shape {self.shape}",
               f"  biggest limit ({self.limit}): {self.hint}",
               f"  {self.detail}"]
        if needs is not None:
            out.append(f"  (the check asks for {needs:.2f}x torch's speed, and torch's {self.op} runs near that ceiling)")
        return out


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(","))


def _read(report: str, shape: tuple, compulsory: int) -> Run:
    from operator_course.cuda.cuda_cpu import _fields

    totals, launches, sites, atomics = {}, [], [], {}
    for ln in report.splitlines():
        f = _fields(ln)
        kind = f.pop("kind", "")
        if kind == "totals":
            totals = {k: int(v) for k, v in f.items()}
        elif kind == "launch":
            launches.append({"grid": _ints(f["grid"]), "block": _ints(f["block"]), "shared": int(f["shared"])})
        elif kind == "site":
            sites.append({k: (v if k == "rw" else int(v)) for k, v in f.items()})
        elif kind == "atomics":
            atomics = {k: int(v) for k, v in f.items()}
    return Run(shape, totals, launches, sites, atomics, compulsory)


def _compulsory(op: str, shape: tuple, size: int = 4) -> int:
    from .cases import input_shapes, output_shape

    return size * (sum(math.prod(s) for s in input_shapes(op, shape)) + math.prod(output_shape(op, shape)))


def profile(op: str, kernel, shape: tuple, seed: int = 0) -> Run:
    """The kernel (a cuda_cpu.CpuLab) run on the CPU on float32 inputs of ``shape``, counted."""
    from .judge import Case, judge
    from .cases import draw

    gen = torch.Generator().manual_seed(seed)
    case = Case(torch.float32, shape, draw(op, shape, torch.float32, "cpu", gen))
    buffer, out = case.output(op, "cpu")
    report = kernel.profile(case.inputs_on("cpu"), out, f"{op} (CUDA) is wrong for shape {case}")
    judge(op, "CUDA", case, buffer, "cuda")  # a wrong kernel's speed says nothing
    run = _read(report, shape, _compulsory(op, shape))
    if not run.work:
        raise AssertionError(f"the kernel read and wrote no global memory at shape {case}")
    return run


def _bench_launch(op: str, kernel, shape: tuple) -> dict:
    """The largest launch the lab's launcher makes for ``shape`` (recorded, not run)."""
    from .cases import input_shapes

    launches = _read(kernel.launches([torch.empty(s, device="meta") for s in input_shapes(op, shape)]), shape, 0).launches
    return max(launches, key=lambda l: math.prod(l["grid"]) * math.prod(l["block"]))


def _law(small: float, large: float, ratio: float) -> float:
    """The exponent a in large = small * ratio**a, between 0 and 1."""
    if small <= 0 or large <= 0 or ratio <= 1:
        return 0.0
    return min(1.0, max(0.0, math.log(large / small) / math.log(ratio)))


def _one_of(efficiency: float) -> str:
    return f"1 of {round(1 / efficiency)}" if efficiency < 0.75 else f"{efficiency:.0%}"


def model(op: str, small: Run, large: Run, launch: dict, bench: tuple, lines: dict[int, str] | None = None,
          names: tuple = ()) -> Estimate:
    """The H200's predicted fraction of COPY_CEILING at ``bench`` from two CPU runs (``small`` and
    ``large``, the same kernel on shapes scaled down from it) and the launch of ``bench``.
    ``lines``: site pc -> 'line N' of CUDA_SOURCE; ``names``: the lab's buffer names."""
    from operator_runtime_testing.operators import get

    lines, names = lines or {}, names or ()
    compulsory = _compulsory(op, bench)
    scale = compulsory / large.compulsory
    work = large.work * scale
    # threads that work at once: as the two runs scale, at most those launched
    parallel = large.parallel * scale ** _law(small.parallel, large.parallel, large.compulsory / small.compulsory)
    block = math.prod(launch["block"])
    blocks = math.prod(launch["grid"])
    parallel = min(parallel, blocks * block)
    resident_blocks = min(blocks, SMS * min(BLOCKS_PER_SM, THREADS_PER_SM // block))
    active = min(large.active_per_block, block)
    in_flight = max(1.0, min(parallel, resident_blocks * active))
    # bytes DRAM moves: the sectors of each site's warp instructions, for all its accesses
    dram, worst = 0.0, None
    for s in large.sites:
        if not s["bytes"]:
            continue
        sectors_per_byte = s["sectors"] * SECTOR / s["sampled_bytes"] if s["sampled_bytes"] else 1.0
        moved = s["bytes"] * sectors_per_byte
        dram += moved
        waste = moved - s["bytes"]
        if worst is None or waste > worst[0]:
            worst = (waste, s)
    atomics = large.atomics.get("count", 0)
    dram += atomics * ATOMIC_BYTES
    dram *= scale
    requested = sum(s["bytes"] for s in large.sites) * scale
    # atomics: their count scales with the work, their addresses as the two runs show
    atomics_b = atomics * scale
    addresses = large.atomics.get("addresses", 0) + large.atomics.get("untracked", 0)
    addresses_b = addresses * scale ** _law(small.atomics.get("addresses", 0), large.atomics.get("addresses", 0),
                                            large.compulsory / small.compulsory) if addresses else 0
    chain = atomics_b / max(addresses_b, 1.0) if atomics else 0.0  # atomics on the busiest address

    ideal = compulsory / COPY_CEILING
    times = {"memory traffic": dram / COPY_CEILING,
             "latency": work * LATENCY / (in_flight * REQUESTS_IN_FLIGHT),
             "atomics": chain * ATOMIC_SAME_ADDRESS}
    limit = max(times, key=times.get)
    fraction = min(1.0, ideal / max(times[limit], 1e-30))

    # the hint: what makes the binding limit long
    record = get(op)
    warps_per_sm = in_flight / 32 / SMS
    need_warps = COPY_CEILING * LATENCY / (REQUESTS_IN_FLIGHT * 4 * 32 * SMS)
    row_len = bench[-1] if record.kind == "rows" else None
    per_thread = large.totals["span"]
    traffic = {"atomics": atomics_b * ATOMIC_BYTES, "sectors": (worst[0] if worst else 0.0) * scale,
               "passes": requested - compulsory}
    cause = limit if limit != "memory traffic" else max(traffic, key=traffic.get)
    if limit == "memory traffic" and traffic[cause] < 0.1 * compulsory:
        cause = "none"
    threads = lambda n: f"{n:.0f} thread{'s' * (round(n) != 1)}"  # noqa: E731
    if cause == "atomics":
        where = f" (CUDA_SOURCE line {large.atomics['line']})" if large.atomics.get("line") else ""
        per = large.atomics.get("max_per_address", 0)
        each = atomics / max(large.compulsory // 4 - math.prod(record.output_shape(large.shape)), 1)
        if addresses <= 1:
            hint = (f"all {threads(large.totals['active_threads'])} with work atomicAdd to one address{where}: "
                    f"serialised, {atomics} atomics one after the other at shape {large.shape}; reduce within a warp "
                    "(__shfl_xor_sync) and a block (shared memory) first, then one atomic per block")
        else:
            hint = (f"{per} atomicAdds to one address{where}, {each:.2g} per input element at shape {large.shape}: "
                    "serialised on that address, each moving a 32-byte sector; reduce within a warp (__shfl_xor_sync) "
                    "and a block (shared memory) first, then one atomic or store per block")
    elif cause == "latency":
        active = f"{threads(large.active_per_block)} per block active of {block}"
        flight = (f"{warps_per_sm:.1f} warps per SM in flight of the ~{need_warps:.0f} an H200 needs to cover a "
                  f"load's ~{LATENCY * 1e9:.0f} ns")
        if row_len and per_thread >= row_len:
            hint = (f"one thread per row: {active}; a thread makes {per_thread} accesses in turn (a row is {row_len} "
                    f"long), so at {bench} about {parallel:.0f} threads have work, {flight}: give each row a block "
                    "(or a warp), its threads striding the row")
        elif large.active_per_block < block / 2:
            hint = f"{active}: {flight}; let every thread of a block take a share"
        else:
            hint = f"too few threads in flight: {flight} (a thread makes {per_thread} accesses in turn)"
    elif cause == "sectors":
        s = worst[1]
        eff = min(1.0, s["sampled_bytes"] / (s["sectors"] * SECTOR)) if s["sectors"] else 1.0
        verb = "writes" if s["rw"] == "write" else "reads"
        name = names[s["buf"]] if s["buf"] < len(names) else f"buffer {s['buf']}"
        line = lines.get(s["pc"], "")
        where = f" (CUDA_SOURCE {line})" if line.startswith("line") else ""
        per_request = s["sectors"] / max(s["instances"], 1)
        stride = abs(s["stride"])
        if stride > s["size"]:
            hint = (f"each thread {verb} {name} with a stride of {stride} bytes{where}: a warp's request touches "
                    f"{per_request:.0f} sectors of 32 B, {_one_of(eff)} bytes fetched used; let neighbouring threads "
                    "take neighbouring elements (thread i, i + gridDim.x * blockDim.x, ...)")
        else:
            hint = (f"{verb[:-1]}s of {name}{where}: {per_request:.0f} sectors of 32 B per warp request, "
                    f"{_one_of(eff)} bytes fetched used")
    elif cause == "passes":
        hint = (f"the kernel moves {requested / compulsory:.1f}x the bytes the op needs (a second pass over the input: "
                "on a GPU L2 may hold it, so this is the model's pessimism as much as the kernel's)")
    else:
        hint = "none found: coalesced accesses, enough threads in flight, few atomics"
    used = sum(s["sampled_bytes"] for s in large.sites)
    fetched = sum(s["sectors"] for s in large.sites) * SECTOR
    requests = sum(s["instances"] for s in large.sites)
    detail = (f"counted on the CPU at shape {large.shape} (and {small.shape}): {min(1.0, used / fetched) if fetched else 1:.0%} "
              f"of fetched bytes used ({fetched / SECTOR / max(requests, 1):.1f} sectors per warp request), "
              f"{large.active_per_block:.0f} of {block} threads per block active, {atomics} atomics; at {bench}: "
              f"{blocks} blocks ({blocks / SMS:.1f} per SM), ~{warps_per_sm:.1f} warps per SM in flight")
    numbers = {"dram": dram, "requested": requested, "compulsory": compulsory, "parallel": parallel,
               "in_flight": in_flight, "times": times, "ideal": ideal, "chain": chain}
    return Estimate(op, tuple(bench), fraction, limit, hint, detail, numbers)


def estimate(op: str, source: str, own_launch: bool = False) -> Estimate:
    """The estimate for the student's CUDA ``source`` (built and run on the CPU: cuda_cpu.build)."""
    from operator_course.cuda import cuda_cpu
    from .cases import BENCH_SHAPES

    kernel = cuda_cpu.build(op, source, own_launch)
    bench = tuple(BENCH_SHAPES[op])
    runs = [profile(op, kernel, (max(1, bench[0] // k), *bench[1:])) for k in SCALES]
    pcs = [s["pc"] for s in runs[-1].sites]
    lines = cuda_cpu._lines(kernel.path, pcs) if pcs else {}
    return model(op, runs[0], runs[-1], _bench_launch(op, kernel, bench), bench, lines, cuda_cpu.POINTERS[op])


def lines(op: str, source: str, own_launch: bool = False, needs: float | None = None) -> list[str]:
    """What a lab prints beside "performance: needs a GPU" (and what a GPU's timing could print beside
    its measurement: the hook for it): 3-4 lines labelled as an estimate, or one saying why there is
    none. ``needs``: the performance check's fraction of torch's speed. Never raises."""
    from operator_course.cuda import cuda_build
    from operator_runtime_testing.operators import get

    if get(op).flops is not None:
        return [f"{LABEL}: none for a compute-bound kernel ({op} is timed in FLOP/s, the model counts bytes)"]
    try:
        return estimate(op, source, own_launch).lines(needs)
    except cuda_build.NoCompiler as e:
        return [f"{LABEL}: not available ({e})"]
    except cuda_build.CompileError:
        return [f"{LABEL}: not available (the kernel does not build: the CUDA check says why)"]
    except AssertionError as e:
        return [f"{LABEL}: not available ({str(e).splitlines()[0]}; the CUDA check says more)"]
    except Exception as e:  # noqa: BLE001 - an estimate must never break the check beside it
        return [f"{LABEL}: not available ({type(e).__name__}: {e})"]
