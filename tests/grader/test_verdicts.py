"""A grading run judges an artifact once: score.Verdicts hands a later submission holding the same
bytes for the same check a copy of the verdict, never a timing, a flagged result or a run the
sandbox lost (a timeout, a crash) and never across checks or artifacts."""

from operator_course.grader.assemble import CheckSpec
from operator_course.grader.gradebook import Row
from operator_course.grader.score import Job, Verdicts


def job(kind: str, source: bytes, check: str = "copy-cuda", **result) -> Job:
    spec = CheckSpec(index=0, id=check, points=2.0, kind="cuda", op="copy", answer="CUDA_SOURCE")
    return Job(spec, kind, {"source.cu": source}, [], result=result or {"error": None})


def row(student: str, check: str = "copy-cuda", status: str = "passed") -> Row:
    return Row(student, "01_copy", check, status, 2.0 if status == "passed" else 0.0, 2.0, "copy (CUDA): passed")


def test_the_same_artifact_gets_the_first_verdict_under_its_own_name():
    verdicts = Verdicts()
    verdicts.remember({"copy-cuda": job("cuda-cpu", b"kernel A")}, [row("ann")])
    again = verdicts.known({"copy-cuda": job("cuda-cpu", b"kernel A")}, "bob")
    assert list(again) == ["copy-cuda"]
    assert again["copy-cuda"].student == "bob" and again["copy-cuda"].status == "passed"


def test_other_bytes_another_check_or_another_kind_run_again():
    verdicts = Verdicts()
    verdicts.remember({"copy-cuda": job("cuda-cpu", b"kernel A")}, [row("ann")])
    assert not verdicts.known({"copy-cuda": job("cuda-cpu", b"kernel A ")}, "bob")
    assert not verdicts.known({"copy-cuda-again": job("cuda-cpu", b"kernel A", check="copy-cuda-again")}, "bob")
    assert not verdicts.known({"copy-cuda": job("cuda", b"kernel A")}, "bob")


def test_timings_flags_and_lost_runs_are_never_reused():
    verdicts = Verdicts()
    verdicts.remember({"copy-performance": job("performance", b"kernel A", check="copy-performance")},
                      [row("ann", "copy-performance")])
    verdicts.remember({"copy-cuda": job("cuda-cpu", b"kernel B", error="ran past the time limit", lost=True)},
                      [row("ann", status="failed")])
    verdicts.remember({"copy-cuda": job("cuda-cpu", b"kernel C", error="wrong", flag="impossible timing")},
                      [row("ann", status="failed")])
    assert not verdicts.known({"copy-performance": job("performance", b"kernel A", check="copy-performance")}, "bob")
    assert not verdicts.known({"copy-cuda": job("cuda-cpu", b"kernel B")}, "bob")
    assert not verdicts.known({"copy-cuda": job("cuda-cpu", b"kernel C")}, "bob")
