"""What the graded lab notebooks (labs/) call: build a student's kernel, check it against
torch on awkward inputs, measure it against torch on a GPU.

    from operator_runtime_testing import lab
    lab.check_tilelang("copy", copy_program)      # raises AssertionError with the first mismatch
    lab.check_cuda("copy", CUDA_SOURCE)           # compiles with nvcc; runs on a GPU
    lab.check_performance("copy", CUDA_SOURCE, fraction=0.5)

Instructors: ``python -m operator_runtime_testing.lab.release`` writes the student versions,
``python -m operator_runtime_testing.lab.grade`` grades a folder of submissions.
"""

from .checks import check_cuda, check_performance, check_tilelang, describe, launch

__all__ = ["check_cuda", "check_performance", "check_tilelang", "describe", "launch"]
