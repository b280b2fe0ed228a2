"""PerformanceResult: one benchmark row, as a profiler would report it, and its JSON file."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import torch


@dataclass
class PerformanceResult:
    op: str
    backend: str
    shape: list[int]
    dtype: str
    attrs: dict
    latency_ms: float            # median
    latency_p10_ms: float
    latency_p90_ms: float
    bytes: int                   # each input read once, each output written once
    flops: int
    torch_ms: float              # eager torch, same shapes, same run
    torch_compile_ms: float | None = None
    # torch's other implementations of the same call, timed in the same run (attention: sdpa's flash and
    # cuDNN backends, forced one at a time; tests/bench/<op>.py's torch_peers)
    torch_peers_ms: dict = field(default_factory=dict)
    ceiling_gbps: float | None = None   # measured copy ceiling of this device in this run
    host_us: float | None = None        # host time per prepared run() on a tiny tensor
    torch_host_us: float | None = None  # eager torch's, same tiny tensor, allocating its result
    eager_host_us: float | None = None  # host time per eager call with out= (ort.<op>(..., out=)), same tiny tensor
    torch_out_host_us: float | None = None  # torch's op writing into out (its out= form; softmax has none)
    peak_gflops: float | None = None    # the device's datasheet compute peak for this row's dtype and units
    notes: list[str] = field(default_factory=list)

    @property
    def gbps(self) -> float:
        return self.bytes / (self.latency_ms * 1e-3) / 1e9 if self.latency_ms > 0 else 0.0

    @property
    def gflops(self) -> float:
        return self.flops / (self.latency_ms * 1e-3) / 1e9 if self.latency_ms > 0 else 0.0

    @property
    def best_torch_ms(self) -> float:
        """The peer a user would pick: eager, torch.compile or one of torch's backends, whichever is fastest."""
        return min(t for t in (self.torch_ms, self.torch_compile_ms, *self.torch_peers_ms.values()) if t is not None)

    @property
    def speedup(self) -> float:
        """torch's latency over ours: above 1 means we are faster."""
        return self.best_torch_ms / self.latency_ms if self.latency_ms > 0 else 0.0

    @property
    def ceiling_fraction(self) -> float | None:
        return self.gbps / self.ceiling_gbps if self.ceiling_gbps else None

    @property
    def torch_gflops(self) -> float:
        return self.flops / (self.torch_ms * 1e-3) / 1e9 if self.torch_ms > 0 else 0.0

    @property
    def peak_fraction(self) -> float | None:
        """Achieved FLOP/s over the datasheet peak: the compute side of the roofline."""
        return self.gflops / self.peak_gflops if self.peak_gflops and self.flops else None

    def to_json(self) -> dict:
        row = asdict(self)
        row.update(gbps=self.gbps, gflops=self.gflops, torch_gbps=self.bytes / (self.torch_ms * 1e-3) / 1e9,
                   torch_gflops=self.torch_gflops, speedup=self.speedup, ceiling_fraction=self.ceiling_fraction,
                   peak_fraction=self.peak_fraction)
        return row


def device_info(device: str) -> dict:
    if torch.device(device).type != "cuda":
        return {"type": "cpu", "name": platform.processor() or platform.machine(),
                "threads": torch.get_num_threads()}
    props = torch.cuda.get_device_properties(torch.device(device))
    info = {"type": "cuda", "name": props.name, "sm_count": props.multi_processor_count,
            "memory_gib": round(props.total_memory / 2**30, 1), "capability": f"{props.major}.{props.minor}"}
    if shutil.which("nvidia-smi"):
        query = "clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,driver_version"
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip().splitlines()
        if out:
            info["nvidia_smi"] = dict(zip(query.split(","), (v.strip() for v in out[0].split(","))))
    return info


def versions() -> dict:
    v = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        import operator_runtime
        v["operator_runtime"] = operator_runtime.__version__
    except ImportError:
        pass
    return v


def write_results(path: str | Path, results: list[PerformanceResult], device: str, command: list[str],
                  ceiling_gbps: float | None) -> None:
    doc = {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(command),
        "device": device_info(device),
        "versions": versions(),
        "copy_ceiling_gbps": ceiling_gbps,
        "rows": [r.to_json() for r in results],
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")


def read_results(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())
