"""The course around the runtime, by audience:

    lab/       what a student's notebook calls: checks against torch, pictures of what went wrong,
               the timing a student sees (the grader's own harness)
    grader/    the instructor's release and the sandboxed grader, in stages: collect (submissions.py),
               assemble, execute (sandbox.py, cgroups.py), score (runner.py; program_check.py vets
               TileLang artifacts), gradebook
    cuda/      building a lab's CUDA kernel: nvcc with the source checks (cuda_build.py), or the
               CPU emulator (cuda_cpu.py and cuda_cpu_runtime/) on a laptop
    hosting/   a class on one machine (JupyterHub, the instructor's commands) and, in kubernetes/,
               the recipe for a larger one
    book/      the chapters' figures and tables (roofline, step charts, diagrams)

It uses the runtime only through its public API (operator_runtime), and the test helpers of
operator_runtime_testing (the operator records, tolerances, the trusted timing harness).
"""
