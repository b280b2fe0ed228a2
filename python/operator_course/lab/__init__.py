"""What the graded lab notebooks (labs/) call: build a student's kernel, check it against
torch on awkward inputs, measure it against torch on a GPU.

    from operator_course import lab
    lab.check_tilelang("copy", copy_program)      # raises AssertionError with the first mismatch
    lab.check_cuda("copy", CUDA_SOURCE)           # compiles with nvcc; runs on a GPU
    lab.check_performance("copy", CUDA_SOURCE, fraction=0.5)

Instructors: ``python -m operator_course.grader.release`` writes the student versions,
``python -m operator_course.grader.grade`` grades a folder of submissions.
"""

__all__ = ["check_cuda", "check_performance", "check_tilelang", "compare_tilelang", "describe", "launch"]


def __getattr__(name: str):
    # The checks need torch (seconds to import); the instructor tools (operator_course.grader:
    # release, grade) must not pay for it, nor need it for --help. So .checks loads on first use.
    if name in __all__:
        from . import checks

        return getattr(checks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))  # tab completion in a notebook lists the checks
