"""The check functions lab notebooks call. Each raises AssertionError naming the first input
that went wrong (op, backend, shape, dtype, worst element). On success the TileLang checks print
one line that is the same on every machine, so nbval compares it. The CUDA checks run the kernel
natively on a GPU and, without one, compile it for sm_90 and run it on the CPU (cuda_cpu.py).
The performance checks need a GPU: without one they say so, and the grader records them as not
graded on that machine."""

from __future__ import annotations

import functools

import torch

from operator_course.cuda import cuda_build
from operator_runtime_testing import verified_timing

from .build_errors import captured_log, explain
from .cell_lines import with_cell_lines
from .judge import Wrong, judge, lab_cases, launch_failed
from .cpu_tiles import reads_output
from .kernels import (GPU_PROGRAM_DIFFERS, bf16_program_differs, compile_tilelang, gpu_program_differs, guarded,
                      input_count, lower_for_gpu, order_dependent, run_tilelang)

_compiled: dict = {}  # (program factory, dtype, device) -> compiled kernel, for this kernel process
_in_order: dict = {}  # the same keys -> the kernel with its grid run first to last, where that could differ
_gpu_differs: dict = {}  # the same keys -> whether the factory's GPU program is another program (CPU only)


class CheckFailed(AssertionError):
    """A check's verdict on a wrong answer: the message is what the student needs, so IPython
    shows it alone (``_render_traceback_``), not the frames of this package that led to it.
    Anywhere else (pytest, the grader) it is the AssertionError it always was."""

    def _render_traceback_(self) -> list[str]:
        return ["\x1b[0;31mCheckFailed\x1b[0m: " + str(self).replace("\n", "\n    ")]


def verdict(check):
    """A public check whose AssertionError reaches the notebook as a CheckFailed."""
    @functools.wraps(check)
    def run(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except CheckFailed:
            raise
        except AssertionError as e:
            raise CheckFailed(str(e)) from None
    return run


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _compare(op: str, name: str, run, device: str, lang: str) -> None:
    """Runs ``run(inputs, out)`` on every lab input, smallest first, and compares each result
    with torch; the first wrong one raises, with its picture shown in a notebook."""
    from . import picture

    passed = []
    for case in lab_cases(op, device, lang=lang):
        buffer, out = case.output(op, device)
        try:
            run(case.inputs_on(device), out)
        except RuntimeError as e:  # the launch itself failed (TileLang's runtime or CUDA's)
            raise AssertionError(launch_failed(f"{op} ({name})", str(case), e)) from None
        try:
            judge(op, name, case, buffer, lang, passed)
        except Wrong as e:
            picture.show(e.mask, f"{op} ({name}), shape {case}: wrong elements in red")
            raise
        passed.append(case)


def _built(who: str, what: str, make):
    """``make()``, or the student's TileLang error in a few lines (the full report in a toggle)."""
    __tracebackhide__ = True  # IPython shows the student the message, not this frame
    try:
        with captured_log() as log:
            return make()
    except Exception as e:  # noqa: BLE001 - any error here is the student's program's
        short, full = explain(e, who, what, log.getvalue())
    _show_details("TileLang's full report", full)
    raise AssertionError(short) from None


def _show_details(summary: str, text: str) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return
    if get_ipython() is not None:
        import html

        display(HTML(f"<details><summary>{summary}</summary><pre>{html.escape(text)}</pre></details>"))


@verdict
def check_tilelang(op: str, program_factory, name: str = "TileLang") -> None:
    """Compile ``program_factory(dtype, gpu)`` for this machine (cuda on a GPU, TileLang's C
    target on the CPU) and compare it with torch on every lab input."""
    from operator_runtime.tilelang_support import TL_DTYPES

    device = _device()

    def run(inputs, out):
        if out.numel() == 0:
            return
        key = (program_factory, out.dtype, device)  # a redefined factory is a new object: compiled anew
        if key not in _compiled:
            dtype = TL_DTYPES[out.dtype]
            who, where = f"{op} ({name})", "the GPU" if device == "cuda" else "the CPU"
            program = _built(who, f"building the {dtype} program", lambda: program_factory(dtype, device == "cuda"))
            if device == "cpu":  # the grader builds the GPU's program too (export.py): so does the notebook
                gpu_program = _built(who, f"building the {dtype} program for a GPU (gpu=True)",
                                     lambda: program_factory(dtype, True))
                _gpu_differs[key] = gpu_program_differs(program, gpu_program)
                _built(who, f"lowering the {dtype} program for a GPU (sm_90)", lambda: lower_for_gpu(gpu_program))
                if dtype == "float16":  # and the bfloat16 program, which a CPU cannot run, must mirror it
                    bf16 = _built(who, "building the bfloat16 program for a GPU (gpu=True)",
                                  lambda: program_factory("bfloat16", True))
                    _gpu_differs[key] |= bf16_program_differs(gpu_program, bf16)
                    _built(who, "lowering the bfloat16 program for a GPU (sm_90)", lambda: lower_for_gpu(bf16))
            compiled = _built(who, f"compiling the {dtype} program for {where}",
                              lambda: compile_tilelang(program, device, input_count(op)))
            # the C target runs a grid last to first; where blocks could hand results on (the program reads
            # its output) also first to last, as the grader does (runner.py): a GPU promises neither order
            _in_order[key] = _built(who, f"compiling the {dtype} program for {where}",
                                    lambda: compile_tilelang(program, device, input_count(op), reverse=False)) \
                if device == "cpu" and reads_output(program) else None
            _compiled[key] = compiled  # last: a check stopped while compiling compiles both again
        run_tilelang(_compiled[key], op, inputs, out)
        if _in_order[key] is not None:
            _, again = guarded(tuple(out.shape), out.dtype, device)
            run_tilelang(_in_order[key], op, inputs, again)
            if why := order_dependent(out, again, out.dtype, guard=0):
                raise AssertionError(f"{op} ({name}) is wrong for shape {tuple(inputs[0].shape)} "
                                     f"{str(out.dtype).removeprefix('torch.')}: {why}")

    _compare(op, name, run, device, "tilelang")
    differs = any(v for (factory, _, _), v in _gpu_differs.items() if factory is program_factory)
    print(f"{op} ({name}): passed" + (f"; note: {GPU_PROGRAM_DIFFERS}" if differs else ""))


@verdict
def check_cuda(op: str, source: str, own_launch: bool = False, compile_for_gpu: bool = True) -> None:
    """Compile the student's CUDA source with nvcc and run it on every lab input: on a GPU
    natively; without one the kernel is compiled for sm_90 (it must build for the GPU) and runs on
    the CPU (cuda_cpu.py: the same source built with g++ against our CUDA header), which also
    reports what a GPU would hide: accesses out of bounds, races on shared memory, reads of shared
    memory no thread wrote, barriers and shuffles that not every thread reaches. Same inputs, same
    judge, same messages.
    ``own_launch``: the source launches its kernel itself (a chapter's step kernel:
    cuda_build.STEP_LAUNCHERS); ``compile_for_gpu=False`` skips the sm_90 build on a CPU machine.
    In a notebook each CUDA_SOURCE line a message cites also gets the line of the answer cell."""
    try:
        _check_cuda(op, source, own_launch, compile_for_gpu)
    except AssertionError as e:
        raise AssertionError(with_cell_lines(str(e), source)) from None


def _check_cuda(op: str, source: str, own_launch: bool, compile_for_gpu: bool) -> None:
    from operator_course.cuda import cuda_cpu
    from . import picture

    try:
        if torch.cuda.is_available():
            kernel = cuda_build.build(op, source, own_launch)
        else:
            try:
                if compile_for_gpu:
                    cuda_build.compile_check(op, source, own_launch=own_launch)
            except cuda_build.NoCompiler as e:
                print(f"{op} (CUDA): not compiled for sm_90 ({e}); running it on the CPU")
            kernel = cuda_cpu.build(op, source, own_launch)
    except cuda_build.NoCompiler as e:
        print(f"{op} (CUDA): not checked: {e}")
        return
    except cuda_build.CompileError as e:
        _show_details("nvcc's full output", e.full)
        raise AssertionError(str(e)) from None
    if torch.cuda.is_available():
        try:
            _compare(op, "CUDA", lambda inputs, out: kernel(*inputs, out=out), "cuda", "cuda")
        except AssertionError as on_gpu:
            found = _fault_on_cpu_path(op, source, own_launch)
            if found is None:
                raise _with_uninitialized_hint(on_gpu, op, source, own_launch) from None
            raise AssertionError(f"{found}\n(On the GPU: {str(on_gpu).splitlines()[0]})") from None
    else:
        try:
            _compare_on_cpu_path(op, kernel, picture)
        except Wrong as wrong:
            raise _with_uninitialized_hint(wrong, op, source, own_launch) from None
    print(f"{op} (CUDA): passed")


def _with_uninitialized_hint(e: AssertionError, op: str, source: str, own_launch: bool) -> AssertionError:
    """``e`` (wrong numbers) with, after its first line, the local variables g++ finds read before they have
    a value: a likelier cause than the judge's guesses from the wrong elements' pattern (a `float dot;`
    summed into was answered with hints about empty rows and the running max)."""
    from operator_course.cuda import cuda_cpu

    try:
        found = cuda_cpu.uninitialized_reads(op, source, own_launch)
    except Exception:  # noqa: BLE001 - no g++ here, or it failed: the judge's message stands alone
        found = []
    if not found:
        return e
    names = ", ".join(f"`{name}` (CUDA_SOURCE line {line})" for line, name in found)
    first, _, rest = str(e).partition("\n")
    hint = (f"Hint: g++ finds {names} read before {'it is' if len(found) == 1 else 'they are'} given a value: "
            "initialise it where it is declared (`float dot = 0.f;`); on a GPU it starts with whatever its register "
            "held")
    return Wrong(first + "\n" + hint + ("\n" + rest if rest else ""), getattr(e, "mask", None))


def _compare_on_cpu_path(op: str, kernel, picture=None) -> None:
    """The CPU execution path's check: every lab input, the GPU's dtypes (bfloat16 too: the CPU
    build has them all); a fault its checker finds (out of bounds, a race, ...) raises from run."""
    passed = []
    for case in lab_cases(op, "cuda"):
        buffer, out = case.output(op, "cpu")
        kernel.run(case.inputs_on("cpu"), out, f"{op} (CUDA) is wrong for shape {case}")
        try:
            judge(op, "CUDA", case, buffer, "cuda", passed)
        except Wrong as e:
            if picture is not None:
                picture.show(e.mask, f"{op} (CUDA), shape {case}: wrong elements in red")
            raise
        passed.append(case)


def _fault_on_cpu_path(op: str, source: str, own_launch: bool) -> str | None:
    """Why a kernel failed on the GPU, when the CPU execution path can say: a GPU shows a race or
    a stray write only as wrong numbers (and a hint guessed from them), while the CPU path watches
    every access. The checker's finding, or None (no compiler here, or no fault found there)."""
    from operator_course.cuda import cuda_cpu

    try:
        kernel = cuda_cpu.build(op, source, own_launch)
    except (AssertionError, cuda_build.NoCompiler, cuda_build.CompileError):
        return None  # no CPU build here: the GPU's message stands alone
    try:
        _compare_on_cpu_path(op, kernel)
    except Wrong:
        return None  # wrong numbers there too: the GPU's message already says which
    except AssertionError as e:  # from kernel.run: the checker found a fault
        return str(e)
    return None


@verdict
def check_performance(op: str, source: str, fraction: float) -> None:
    """On a GPU: the student's CUDA kernel must reach ``fraction`` of torch's speed, the geometric
    mean over the benchmark shape and an odd one (larger than L2; matmul's in float32, timed in
    TFLOP/s), measured as the grader measures it (``measure``)."""
    from .estimate import lines as estimate_lines  # the CPU path's model of an H200

    if not torch.cuda.is_available():
        print(f"{op} performance: needs a GPU")
        for line in estimate_lines(op, source, needs=fraction):
            print(line)
        return
    ratio, summary = measure(op, cuda_build.build(op, source))
    print(summary)
    for line in estimate_lines(op, source):  # beside the measurement: how close the laptop's model came
        print(line)
    if ratio < fraction:
        raise AssertionError(f"{op} reaches {ratio:.2f}x torch's speed; this check needs {fraction:.2f}x")


def compare_tilelang(op: str, programs: dict) -> None:
    """On a GPU: the bandwidth of each TileLang program (``{label: program_factory}``) on
    BENCH_SHAPES beside torch's, so a student sees what a change (e.g. T.Pipelined) bought.
    Not a check: nothing is graded, and without a GPU it only says so."""
    if not torch.cuda.is_available():
        print(f"{op}: timing TileLang programs needs a GPU")
        return
    from operator_runtime.tilelang_support import TL_DTYPES

    for label, factory in programs.items():
        try:  # a program that does not build is its check's business: here it is only skipped
            program = _built(f"{op} ({label})", "building the float32 program",
                             lambda: factory(TL_DTYPES[torch.float32], True))
            kernel = _built(f"{op} ({label})", "compiling the float32 program for the GPU",
                            lambda: compile_tilelang(program, "cuda"))
            _, summary = measure(op, lambda *inputs, out: run_tilelang(kernel, op, list(inputs), out))
        except (AssertionError, RuntimeError) as e:
            summary = f"not timed ({str(e).splitlines()[0]})"
        print(f"{label}: {summary}")


def measure(op: str, kernel, seed: int | None = None) -> tuple[float, str]:
    """(torch's time / ours, a one-line summary) for the built CUDA ``kernel``, through the trusted
    harness (verified_timing.py: fresh inputs every call, every call's output checked, L2 flushed,
    several shapes by geometric mean, impossible times rejected), the grader's own. A notebook
    draws a fresh seed; the grader passes its secret one."""
    seed = torch.seed() if seed is None else seed
    result = verified_timing.measure(op, lambda inputs, out: kernel(*inputs, out=out), "cuda", seed)
    return result.ratio, result.summary


def launch(gpu: bool, threads: int) -> dict:
    """T.Kernel's keyword arguments: ``threads`` per block on a GPU; TileLang's C target takes none."""
    return {"threads": threads} if gpu else {}


def describe() -> str:
    """Which checks this machine runs (printed by the labs' first cell; its output varies)."""
    if torch.cuda.is_available():
        return f"GPU: {torch.cuda.get_device_name()}: TileLang and CUDA kernels run and are timed against torch"
    return ("no GPU: TileLang kernels run on the CPU (C target; a grid's blocks last to first, as a GPU may "
            "order them, and first to last too where a program reads its output); CUDA kernels are compiled for "
            "sm_90 and run on the CPU (which also reports out-of-bounds accesses, shared-memory races and barriers or shuffles not "
            "every thread reaches); performance checks need a GPU")
