"""What a CPU grader (and a laptop's notebook check) holds a TileLang factory's GPU programs to
(lab/kernels.py): each lowers for sm_90, and the bfloat16 one mirrors the float16 one, since
no CPU runs it. The instructor's factories pass both; a bfloat16-only branch differs. (A program
that lowering refuses: tests/labs/mistakes/reduce_sum_parallel_running_sum.py.)"""

import importlib.util
from pathlib import Path

import pytest

from operator_course.grader.notebook import instructor_labs, lab_meta, read
from operator_course.lab.kernels import bf16_program_differs, lower_for_gpu

pytest.importorskip("tilelang")

ROOT = Path(__file__).resolve().parents[2]


def factories() -> dict[str, object]:
    """answer id -> the instructor's factory, its cell run from a file (TileLang reads the source)."""
    import tempfile

    import tilelang.language as T

    from operator_course import lab

    out, folder = {}, Path(tempfile.mkdtemp(prefix="factories-"))
    for path in instructor_labs(ROOT / "labs").values():
        for cell in read(path).cells:
            answer = lab_meta(cell).get("answer", "")
            if "tilelang" in answer:
                source = folder / f"{answer.replace('-', '_')}.py"
                source.write_text(cell.source)
                namespace = {"T": T, "lab": lab}
                exec(compile(cell.source, str(source), "exec"), namespace)
                out[answer] = next(v for k, v in namespace.items() if k.endswith("_program") and callable(v))
    return out


FACTORIES = factories()


@pytest.mark.parametrize("answer", sorted(FACTORIES))
def test_the_solutions_bfloat16_program_mirrors_float16_and_lowers(answer):
    factory = FACTORIES[answer]
    f16, bf16 = factory("float16", True), factory("bfloat16", True)
    assert not bf16_program_differs(f16, bf16)
    lower_for_gpu(bf16)


def test_a_bfloat16_only_branch_differs():
    spec = importlib.util.spec_from_file_location("bf16_branch", ROOT / "tests/labs/gpu_program/reduce_sum_bf16_branch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    factory = module.reduce_sum_program
    assert bf16_program_differs(factory("float16", True), factory("bfloat16", True))
    assert not bf16_program_differs(factory("float16", True), factory("float16", True))


def test_a_factory_asking_torch_for_a_gpu_gets_its_gpu_program_built(tmp_path, monkeypatch):
    """A CPU grader's export builds gpu=True while torch says a GPU is there: the sniffing factory's
    GPU program is its GPU one, which differs from the CPU's (so the check waits for a GPU grader)."""
    import json

    import torch
    from tilelang import tvm

    from operator_course.grader import export
    from operator_course.lab.kernels import gpu_program_differs

    if torch.cuda.is_available():
        pytest.skip("on a GPU machine the export builds gpu=True only, with torch's own answer")
    spec = importlib.util.spec_from_file_location("sniff", ROOT / "tests/labs/gpu_program/copy_sniffs_cuda.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.chdir(tmp_path)
    export.save("check", "tilelang", lambda: module.copy_program, ["float32"], False, answer="copy_program")
    folder = tmp_path / "artifacts" / "check"
    assert not (folder / "error.txt").exists(), (folder / "error.txt").read_text()
    cpu, gpu = (tvm.ir.load_json((folder / f"{name}.json").read_text()) for name in ("float32", "gpu-float32"))
    assert gpu_program_differs(cpu, gpu)
    assert torch.cuda.is_available() is False, "the export left torch believing in a GPU"
    assert json.loads((folder / "float32.json").read_text())  # the CPU program, saved as ever
