"""GPU probe for lab 5 (labs/05_matmul.ipynb): its Part 1 solution (a T.gemm tiled GEMM) compiled
for CUDA under the lab's pass configs and under alternatives, on every lab input of matmul, and
its Part 2 solution timed against torch.matmul. Run on a GPU machine from the repository root:

    python3 scripts/matmul_lab_probe.py --json $OUT/matmul-lab-probe.json

Why: the lab's checks passed on the CPU only (TileLang's C target, the CUDA CPU path). On sm_90
T.copy into shared tiles lowers to TMA, which needs 16-byte row strides: the lab's odd K and N
(7, 9, 13 ...) may fail there ("Failed to initialize the TMA descriptor"), as lab 3's rows did
(data/labs/README.md). The probe says which pass configs make the same program right, so the
lab's GPU path can be fixed from facts; and whether float32 T.gemm (tf32) misses the tolerance.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import nbformat  # noqa: E402
import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402

from operator_runtime_testing import lab  # noqa: E402
from operator_runtime_testing.lab import checks, cuda_build  # noqa: E402
from operator_runtime_testing.lab.cases import SHAPES, draw  # noqa: E402
from operator_runtime_testing.lab.judge import Case, judge  # noqa: E402
from operator_runtime_testing.lab.kernels import PASS_CONFIGS, run_tilelang  # noqa: E402

VARIANTS = {
    "lab (as graded)": dict(PASS_CONFIGS),
    "no TMA": {**PASS_CONFIGS, "tl.disable_tma_lower": True},
    "no TMA, no wgmma": {**PASS_CONFIGS, "tl.disable_tma_lower": True, "tl.disable_wgmma": True},
}
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def solutions() -> dict:
    """The instructor notebook's answer cells, run from files (TileLang reads its source back)."""
    nb = nbformat.read(str(ROOT / "labs" / "05_matmul.ipynb"), as_version=4)
    ns = {"T": T, "lab": lab, "torch": torch}
    folder = Path(tempfile.mkdtemp())
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "answer" in cell.metadata.get("lab", {}):
            path = folder / f"cell{i}.py"
            path.write_text(cell.source)
            exec(compile(cell.source, str(path), "exec"), ns)
    return ns


def probe_tilelang(factory) -> list[dict]:
    results = []
    gen = torch.Generator().manual_seed(0)
    for variant, configs in VARIANTS.items():
        for name, dtype in DTYPES.items():
            row = {"variant": variant, "dtype": name}
            try:
                kernel = tilelang.compile(factory(name, True), target="cuda", execution_backend="cython",
                                          pass_configs=configs)
            except Exception as e:  # noqa: BLE001 - recorded, this is a probe
                row["error"] = f"compile: {type(e).__name__}: {str(e)[-400:]}"
                results.append(row)
                continue
            row["shapes"] = {}
            for shape in SHAPES["matmul"]:
                case = Case(dtype, shape, draw("matmul", shape, dtype, "cpu", gen))
                buffer, out = case.output("matmul", "cuda")
                try:
                    run_tilelang(kernel, "matmul", case.inputs_on("cuda"), out)
                    torch.cuda.synchronize()
                    judge("matmul", variant, case, buffer)
                    row["shapes"][str(shape)] = "ok"
                except Exception as e:  # noqa: BLE001
                    row["shapes"][str(shape)] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
            results.append(row)
            print(json.dumps(row)[:600], flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("needs a GPU")
        return 2
    ns = solutions()
    report = {"device": torch.cuda.get_device_name(), "tilelang": probe_tilelang(ns["matmul_program"])}
    ratio, summary = checks.measure("matmul", cuda_build.build("matmul", ns["CUDA_SOURCE"]))
    report["cuda_part2"] = {"ratio_to_torch": ratio, "summary": summary, "lab_fraction": 0.1}
    print(summary)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
