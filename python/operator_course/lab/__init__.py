"""What the graded lab notebooks (labs/) call: build a student's kernel, check it against
torch on awkward inputs, measure it against torch on a GPU.

    from operator_course import lab
    lab.check_tilelang("copy", copy_program)      # raises AssertionError with the first mismatch
    lab.check_cuda("copy", CUDA_SOURCE)           # compiles with nvcc; runs on a GPU
    lab.check_performance("copy", CUDA_SOURCE, fraction=0.5)
    lab.validate("01_copy")   # runs the saved notebook's visible checks: the points they would earn
    lab.submit("01_copy")     # hands in the saved notebook: a timestamped snapshot the instructor collects

(in a terminal: python -m operator_course.lab.validate 01_copy, python -m operator_course.lab.submit 01_copy).

Instructors: ``python -m operator_course.grader.release`` writes the student versions,
``python -m operator_course.grader.grade`` grades a folder of submissions.
"""

__all__ = ["check_cuda", "check_performance", "check_tilelang", "compare_tilelang", "describe", "launch",
           "submit", "validate"]


def __getattr__(name: str):
    if name in ("submit", "validate"):  # callable modules (no torch here): lab.submit("01_copy")
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    # The checks need torch (seconds to import); the instructor tools (operator_course.grader:
    # release, grade) must not pay for it, nor need it for --help. So .checks loads on first use.
    if name in __all__:
        from . import checks

        return getattr(checks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))  # tab completion in a notebook lists the checks
