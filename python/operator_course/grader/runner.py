"""Runs exported lab kernels on the grader's inputs, inside a sandbox. Trusted code, untrusted
data: the programs and sources come from a student's notebook; the inputs from the grader,
which alone holds the references and compares.

    python -m operator_course.grader.runner     (in a work dir holding jobs.json)

jobs.json: {"device": "cpu"|"cuda", "jobs": [{"dir", "kind", "op"}, ...]}, kinds:
  tilelang      <dir>/<dtype>.json programs, run on <dir>/inputs.pt -> <dir>/out<i>.bin
  cuda          <dir>/source.cu built for this GPU, run on <dir>/inputs.pt -> <dir>/out<i>.bin
  cuda-compile  <dir>/source.cu compiled for sm_90 only (no GPU here)
  cuda-cpu      <dir>/source.cu compiled for sm_90, then built for the CPU (cuda_cpu.py) and run
                on <dir>/inputs.pt -> <dir>/out<i>.bin (no GPU here; faults fail the job)
  performance   <dir>/source.cu built and timed against torch (verified_timing.py, on inputs drawn
                from jobs.json's seed)
Each job ends with <dir>/result.json ({"error": text or null, ...}); out<i>.bin holds case
i's guarded output buffer, raw (score.read_outputs). The grader starts one runner per job,
each in a sandbox of its own (score.run_jobs): a kernel that crashes, or that runs code when it
is loaded, touches its own job's files only.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

import torch

from operator_course.lab.kernels import guarded, guarded_input


def _check_gpu_programs(folder: Path, name: str, program, who: str) -> str | bool:
    """On a CPU grader, the factory's GPU programs (export's gpu-<dtype>.json) beside the CPU program of
    ``name``: an error (str) when one does not lower for a GPU (sm_90); else whether one differs (the
    GPU's of this dtype beyond its thread count, bfloat16's from float16's beyond the dtype's name), which
    leaves the check to a GPU grader."""
    from operator_course.lab.build_errors import captured_log, explain
    from operator_course.lab.kernels import bf16_program_differs, gpu_program_differs, lower_for_gpu
    from .program_check import MAX_PROGRAM_JSON, load_program

    names = [name] + ["bfloat16"] * (name == "float16")
    gpu = {}
    for n in names:
        artifact = folder / f"gpu-{n}.json"
        if not artifact.is_file():
            return f"no {n} program for a GPU (gpu=True) was exported"
        if artifact.stat().st_size > MAX_PROGRAM_JSON:
            return f"the {n} program for a GPU is larger than {MAX_PROGRAM_JSON} bytes"
        gpu[n] = load_program(artifact.read_text(errors="replace"))
        try:
            with captured_log() as log:
                lower_for_gpu(gpu[n])
        except Exception as e:  # noqa: BLE001 - the student's program: as the notebook says it
            short, full = explain(e, who, f"lowering the {n} program for a GPU (sm_90)", log.getvalue())
            print(full, flush=True)
            return short
    return gpu_program_differs(program, gpu[name]) or (name == "float16" and bf16_program_differs(gpu[name], gpu["bfloat16"]))


def _load_inputs(folder: Path, device: str) -> list[tuple[torch.dtype, list[torch.Tensor]]]:
    cases = torch.load(folder / "inputs.pt", weights_only=True)
    return [(getattr(torch, c["dtype"]), [t.to(device) for t in c["inputs"]], tuple(c["out_shape"])) for c in cases]


def run_tilelang(folder: Path, op: str, device: str, who: str) -> dict:
    from operator_runtime.tilelang_support import TL_DTYPES

    from operator_course.lab.build_errors import captured_log, explain
    from operator_course.lab.cpu_tiles import reads_output
    from operator_course.lab.judge import launch_failed
    from operator_course.lab.kernels import input_count, order_dependent, run_tilelang as launch

    from .program_check import MAX_PROGRAM_JSON, ProgramRefused, compile_checked, load_program

    # on the CPU the grid's blocks run last to first (cpu_tiles._reverse_blocks), and again first to last where
    # the program reads its output (the only memory blocks could hand results through: cpu_tiles.reads_output):
    # a kernel whose blocks hand results on is right in one order at most (a cheater could build for the one
    # the notebook uses, the block that stores running first); a GPU promises neither
    kernels, in_order, outputs, differs = {}, {}, [], False
    for dtype, inputs, out_shape in _load_inputs(folder, device):
        name = TL_DTYPES[dtype]
        if name not in kernels:
            artifact = folder / f"{name}.json"
            if not artifact.is_file():
                return {"error": f"no {name} program was exported"}
            if artifact.stat().st_size > MAX_PROGRAM_JSON:
                return {"error": f"the {name} program is larger than {MAX_PROGRAM_JSON} bytes"}
            try:  # allowlisted node by node before TVM builds a single object from it (program_check.py)
                program = load_program(artifact.read_text(errors="replace"))
                if device == "cpu":
                    refused = _check_gpu_programs(folder, name, program, who)
                    if isinstance(refused, str):
                        return {"error": refused}
                    differs |= refused
            except ProgramRefused as e:
                return {"error": str(e)}
            try:
                with captured_log() as log:
                    kernels[name] = compile_checked(program, device, input_count(op))  # its generated source scanned too
                    if device == "cpu" and reads_output(program):
                        in_order[name] = compile_checked(program, device, input_count(op), reverse=False)
            except ProgramRefused as e:
                return {"error": str(e)}
            except Exception as e:  # noqa: BLE001 - the student's compile error, as the notebook says it
                where = "the GPU" if device == "cuda" else "the CPU"
                short, full = explain(e, who, f"compiling the {name} program for {where}", log.getvalue())
                print(full, flush=True)  # the long report goes to the runner's log
                return {"error": short}
        buffer, out = guarded(out_shape, dtype, device)
        shape = f"{tuple(inputs[0].shape)} {str(dtype).removeprefix('torch.')}"
        try:
            launch(kernels[name], op, [guarded_input(t, device) for t in inputs], out)
        except RuntimeError as e:  # as the notebook's check says it
            return {"error": launch_failed(who, shape, e)}
        if name in in_order:
            again, out_again = guarded(out_shape, dtype, device)
            try:
                launch(in_order[name], op, [guarded_input(t, device) for t in inputs], out_again)
            except RuntimeError as e:
                return {"error": launch_failed(who, shape, e)}
            if (why := order_dependent(buffer, again, dtype)):
                return {"error": f"{who} is wrong for shape {shape}: {why}"}
        outputs.append(buffer.cpu())
    _sync(device)
    _save_outputs(outputs, folder)
    return {"error": None, "gpu_program_differs": differs}


def run_cuda_cpu(folder: Path, op: str, who: str) -> dict:
    """The kernel on the CPU: it must compile for sm_90 too, and both its sm_90 object and the
    student's object of the CPU build pass the host-code allowlist before anything is loaded."""
    from operator_course.cuda import cuda_build, cuda_cpu

    source = (folder / "source.cu").read_text()
    try:
        objects = [cuda_build.compile_check(op, source)]
        lib, student = cuda_cpu.build_library(op, source, check=True)  # its own g++ -E pass checked too
    except AssertionError as e:  # nvcc's message, or the CPU build's
        print(getattr(e, "full", ""), flush=True)
        return {"error": str(e)}
    problems = cuda_build.host_problems(objects[0]) or cuda_cpu.host_problems(student)
    if problems:
        return {"error": f"the kernel's host code {'; '.join(problems)}: a lab kernel needs only CUDA's "
                         "launch functions (plain CUDA C++, no host code of its own)"}
    kernel = cuda_cpu.CpuLab(op, lib)
    outputs = []
    for dtype, inputs, out_shape in _load_inputs(folder, "cpu"):
        buffer, out = guarded(out_shape, dtype, "cpu")
        shape = f"{tuple(inputs[0].shape)} {str(dtype).removeprefix('torch.')}"  # as judge.Case says it
        try:
            kernel.run([guarded_input(t, "cpu") for t in inputs], out, f"{who} is wrong for shape {shape}")
        except AssertionError as e:
            return {"error": str(e)}
        outputs.append(buffer)
    _save_outputs(outputs, folder)
    return {"error": None}


def run_cuda(folder: Path, op: str, kind: str, seed: int = 0) -> dict:
    from operator_course.cuda import cuda_build

    source = (folder / "source.cu").read_text()
    try:
        lib = cuda_build.compile_check(op, source) if kind == "cuda-compile" else cuda_build.build_library(op, source)
    except AssertionError as e:  # nvcc's first error and hint; all it said goes to the runner's log
        print(getattr(e, "full", ""), flush=True)
        return {"error": str(e)}
    problems = cuda_build.host_problems(lib)  # an object file (compile only) says it as well
    if problems:
        return {"error": f"the kernel's host code {'; '.join(problems)}: a lab kernel needs only CUDA's "
                         "launch functions (plain CUDA C++, no host code of its own)"}
    if kind == "cuda-compile":
        return {"error": None, "compiled": True}
    import ctypes

    kernel = cuda_build.CudaLab(op, ctypes.CDLL(str(lib)))
    if kind == "performance":
        from operator_runtime_testing.verified_timing import ImpossibleTiming
        from operator_course.lab.checks import measure

        try:
            ratio, summary = measure(op, kernel, seed)
        except ImpossibleTiming as e:
            return {"error": str(e), "flag": "impossible timing"}
        except AssertionError as e:  # a timed call computed a wrong result
            return {"error": str(e), "flag": "wrong result while timed"}
        return {"error": None, "ratio": ratio, "summary": summary}
    outputs = []
    for dtype, inputs, out_shape in _load_inputs(folder, "cuda"):
        buffer, out = guarded(out_shape, dtype, "cuda")
        kernel(*[guarded_input(t, "cuda") for t in inputs], out=out)
        outputs.append(buffer.cpu())
    _save_outputs(outputs, folder)
    return {"error": None}


def _save_outputs(buffers: list[torch.Tensor], folder: Path) -> None:
    """Each case's guarded output buffer as raw bytes, one file per case (score.read_outputs): the
    grader knows their sizes before it reads a byte, so nothing here can inflate."""
    for i, buffer in enumerate(buffers):
        (folder / f"out{i}.bin").write_bytes(buffer.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def main() -> int:
    spec = json.loads(Path("jobs.json").read_text())
    for job in spec["jobs"]:
        folder = Path(job["dir"])
        try:
            if job["kind"] == "tilelang":
                result = run_tilelang(folder, job["op"], spec["device"], str(job.get("who", job["op"])))
            elif job["kind"] == "cuda-cpu":
                result = run_cuda_cpu(folder, job["op"], str(job.get("who", job["op"])))
            else:
                result = run_cuda(folder, job["op"], job["kind"], int(spec.get("seed", 0)))
        except Exception as e:  # noqa: BLE001 - a failing kernel fails its own check only
            result = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-3000:]}
        (folder / "result.json").write_text(json.dumps(result))
        print(f"{job['dir']}: {'ok' if not result.get('error') else 'failed'}", flush=True)
    return 0


if __name__ == "__main__":
    code = main()
    # Every result is on disk: skip the interpreter's teardown of torch and TileLang (1-2 s of CPU
    # for each runner process, of which a graded submission starts one per artifact).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
