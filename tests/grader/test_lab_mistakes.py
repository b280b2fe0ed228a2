"""A catalogue of the mistakes students make (tests/labs/mistakes/, one answer cell per file),
each run through the check a student runs in their notebook: it must fail, on the input and
with the cause and the hint its header names. The same answer graded (export, sandboxed runner,
score) must say the same words. Each file's header:

    # what: the mistake
    # check: tilelang <op> <factory name> | cuda <op>
    # needs: gpu | cpu     (optional: the mistake shows only when the kernel runs on a GPU | only on the CPU path)
    # says: fragment | fragment ...    (each must appear in the message)
"""

from __future__ import annotations

import base64

import re
from pathlib import Path

import pytest
import torch

pytest.importorskip("tilelang", reason="the labs' TileLang parts need tilelang (requirements.txt)")

import tilelang.language as T  # noqa: E402

from operator_course import lab  # noqa: E402

FOLDER = Path(__file__).resolve().parents[1] / "labs" / "mistakes"
HEADER = re.compile(r"^# (what|check|needs|says): ?(.*)$")
GPU = torch.cuda.is_available()


def parse(path: Path) -> dict:
    spec, lines = {"needs": ""}, path.read_text().splitlines()
    while lines and HEADER.match(lines[0]):
        key, value = HEADER.match(lines.pop(0)).groups()
        spec[key] = value.strip()
    spec["check"] = spec["check"].split()
    spec["says"] = [s.strip() for s in spec["says"].split(" | ")]
    spec["body"] = "\n".join(lines) + "\n"
    return spec


MISTAKES = {p.stem: parse(p) for p in sorted(FOLDER.glob("*.py"))}


def wrong_machine(spec: dict) -> str:
    """Why this machine cannot show the mistake ("" when it can): `needs: gpu`, it shows when the kernel runs
    on a GPU; `needs: cpu`, it shows in the CPU path's block orders (on a GPU the same kernel races instead)."""
    if spec["needs"] == "gpu" and not GPU:
        return "this mistake shows when the kernel runs on a GPU"
    if spec["needs"] == "cpu" and GPU:
        return "this mistake shows in the CPU path's two block orders; on a GPU it is a race, wrong by chance"
    return ""


def run_cell(name: str, body: str, folder: Path) -> dict:
    """Runs ``body`` as ipykernel runs a cell: from a file of its own (TileLang reads the source
    back), lines numbered from 1."""
    path = folder / f"{name}.py"
    path.write_text(body)
    namespace = {"T": T, "lab": lab, "torch": torch, "__name__": "__main__"}
    exec(compile(body, str(path), "exec", dont_inherit=True), namespace)  # not this file's __future__ flags
    return namespace


def check_message(spec: dict, namespace: dict) -> str:
    kind, op = spec["check"][:2]
    with pytest.raises(AssertionError) as e:
        if kind == "tilelang":
            lab.check_tilelang(op, namespace[spec["check"][2]])
        else:
            lab.check_cuda(op, namespace["CUDA_SOURCE"])
    return str(e.value)


def test_the_catalogue_holds_the_mistakes_the_issue_names():
    assert len(MISTAKES) >= 15
    assert {s["check"][0] for s in MISTAKES.values()} == {"tilelang", "cuda"}


NOTEBOOK: dict[str, tuple[dict, str]] = {}  # name -> (the cell's namespace, the check's message): run once


def notebook_check(name: str, folder: Path) -> tuple[dict, str]:
    """The student's path: the answer cell run, then the check's message (kept for the grader's test)."""
    if name not in NOTEBOOK:
        spec = MISTAKES[name]
        namespace = run_cell(name, spec["body"], folder)
        NOTEBOOK[name] = namespace, check_message(spec, namespace)
    return NOTEBOOK[name]


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_each_mistake_fails_its_check_naming_the_cause_and_the_hint(name, capsys, tmp_path):
    spec = MISTAKES[name]
    if wrong_machine(spec):
        pytest.skip(wrong_machine(spec))
    if spec["check"][0] == "cuda":
        import shutil

        if shutil.which("nvcc") is None:
            pytest.skip("nvcc is not installed")
    text = notebook_check(name, tmp_path)[1]
    missing = [s for s in spec["says"] if s not in text]
    assert not missing, f"{name}: the message lacks {missing}:\n{text}"
    printed = capsys.readouterr()
    assert ": passed" not in printed.out
    assert "source=def" not in printed.err, "TileLang's generated-code dump reached the student"


TILELANG = sorted(n for n, s in MISTAKES.items() if s["check"][0] == "tilelang")


def planned(op: str, factory_name: str, namespace: dict, folder: Path, monkeypatch):
    """The grader's path up to the runner: the answer's programs exported in the student's process,
    the runner's jobs planned on the grader's own shapes. (the check, its jobs, the checks failed before any
    run, whether the export found a program that does not build)"""
    from operator_course.grader import export, secret_shapes
    from operator_course.grader.assemble import CheckSpec
    from operator_course.grader.execute import Executed
    from operator_course.grader.score import dtype_names, plan

    check = CheckSpec(0, "check", 1.0, "tilelang", op, factory_name)
    device = "cuda" if GPU else "cpu"  # the grader judges on its own machine, as the notebook did
    monkeypatch.chdir(folder)
    export.save("check", "tilelang", lambda: namespace[factory_name], dtype_names(device), GPU, check.who, factory_name)
    executed = Executed(artifacts={"check": {p.name: p.read_bytes() for p in (folder / "artifacts" / "check").iterdir()}})
    shapes = secret_shapes.load(secret_shapes.default_path(FOLDER.parents[2] / "labs"), [op])
    jobs, failed = plan([check], executed, device, secret=shapes)
    return check, jobs, failed, "error.txt" in executed.artifacts["check"]


def graded(planned_checks: dict[str, tuple], folder: Path) -> dict:
    """name -> (the gradebook row, the export's error flag) of each planned check, its runner (a process of its own, as the
    grader starts it) run two at a time: each waits on its process, the machine's cores do the work."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from operator_course.grader.sandbox import Unsandboxed
    from operator_course.grader.score import run_jobs, verdict

    def grade(name: str):
        try:
            return graded_one(name)
        except Exception as e:  # noqa: BLE001 - re-raised by that check's test, not by every test of the fixture
            return e

    def graded_one(name: str):
        check, jobs, failed, unbuilt = planned_checks[name]
        run_jobs(list(jobs.values()), "cuda" if GPU else "cpu", Unsandboxed(gpu=GPU), folder / name / "runs", 300,
                 folder / name / "runner.log", threading.Lock())
        return verdict(check, jobs.get("check"), failed.get("check"), "student", "lab"), unbuilt

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(planned_checks, pool.map(grade, planned_checks)))


@pytest.fixture(scope="module")
def graded_mistakes(request, tmp_path_factory):
    """The TileLang mistakes this session selects, each through the grader's path: exported one by
    one (the student's process), their runners two at a time."""
    from _pytest.monkeypatch import MonkeyPatch

    selected = [item.callspec.params["name"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_the_grader_says_the_same_words"]
    folder = tmp_path_factory.mktemp("graded_mistakes")
    checks, failed = {}, {}
    with MonkeyPatch.context() as mp:
        for name in selected:
            if wrong_machine(MISTAKES[name]):
                continue
            spec = MISTAKES[name]
            (folder / name).mkdir()
            try:  # a mistake whose notebook check misbehaves fails its own test, not every test of the fixture
                namespace = notebook_check(name, folder / name)[0]
                checks[name] = planned(*spec["check"][1:3], namespace, folder / name, mp)
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # noqa: BLE001 - a failure or pytest's skip, re-raised by that mistake's test
                failed[name] = e
    return {**graded(checks, folder), **failed}


@pytest.mark.parametrize("name", TILELANG)
def test_the_grader_says_the_same_words(name, graded_mistakes):
    """The grader's path for the same answer: export in the student's process, the kernel run by
    the runner (a separate process; the sandbox is tested in test_grading.py), judged by score."""
    spec = MISTAKES[name]
    if wrong_machine(spec):
        pytest.skip(wrong_machine(spec))
    if isinstance(graded_mistakes[name], BaseException):
        raise graded_mistakes[name]
    notebook_text = NOTEBOOK[name][1]
    row, unbuilt = graded_mistakes[name]
    assert row.status == "failed" and row.points == 0
    if unbuilt or any(f" failed while {w} " in notebook_text for w in ("compiling", "lowering")):
        # a program that does not build (or compile or lower for a GPU, in the runner): word for word
        assert row.reason == notebook_text
    elif " could not run on shape " in notebook_text + row.reason:
        # stores far past every guard: whether they kill the kernel's process depends on what lies there
        assert any(w in row.reason for w in (" could not run on shape ", " is wrong for shape (")), row.reason
    else:  # a wrong result: the grader draws its own inputs, so the values differ, the words do not;
        # nor the first failing shape, where one of its secret shapes is smaller than the public one
        assert " is wrong for shape (" in row.reason, row.reason
        missing = [s for s in spec["says"] if s not in row.reason and not s.startswith("shape (")]
        assert not missing, f"{name}: the grader's reason lacks {missing}:\n{row.reason}"
        assert row.reason.split(" is wrong for ")[0] == notebook_text.split(" is wrong for ")[0]
        if " elements are wrong." in row.reason and " of 1 elements " not in row.reason:
            # the picture the notebook shows is in the feedback file too, as an image, and not in the CSV
            from operator_course.grader import gradebook

            assert base64.b64decode(row.picture).startswith(b"\x89PNG"), f"{name}: no picture in the grader's row"
            assert f"](data:image/png;base64,{row.picture})" in gradebook.feedback([row])
            assert "picture" not in gradebook.COLUMNS
