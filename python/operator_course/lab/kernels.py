"""Running a lab kernel on one input: a compiled TileLang program or a built CUDA library.
Used in the student's notebook and, for grading, inside the sandboxed runner.

Every tensor a lab kernel sees lies inside a larger buffer with GUARD elements on each side, so
a kernel that writes past either end of its output writes into a guard, where the judge finds
it (judge.py), instead of into memory nobody checks. The output starts as NaN, so an element
the kernel never writes cannot pass as a stale zero. Inputs' guards are NaN too: a kernel that
reads past the end computes NaN rather than reading another allocation (or faulting)."""

from __future__ import annotations

import contextlib
import math
import re
import types

import torch

from operator_runtime_testing.operators import OPERATORS

# kernels see 1-d tensors; row ops see (rows, row_len)
ELEMENTWISE = tuple(op for op, r in OPERATORS.items() if r.kind == "elementwise")
GUARD = 4096  # elements on each side: more than any tile a lab kernel uses
GUARD_VALUE = -31.0  # exact in every lab dtype, and not a value a lab kernel writes by accident
# TileLang adds bounds checks to stores it cannot prove in range (LegalizeSafeMemoryAccess); a lab
# kernel must guard its own tail, so the labs compile without them. T.copy still guards its tiles.
PASS_CONFIGS = {"tl.disable_safe_memory_legalize": True}


def guarded(shape, dtype: torch.dtype, device: str, inside: torch.Tensor | None = None):
    """(buffer, view): ``view`` of ``shape`` in the middle of ``buffer``, holding ``inside`` (or
    NaN); the guards hold GUARD_VALUE for an output (``inside`` None) and NaN for an input."""
    numel = math.prod(shape)
    fill = GUARD_VALUE if inside is None else float("nan")
    buffer = torch.full((numel + 2 * GUARD,), fill, dtype=dtype, device=device)
    view = buffer[GUARD:GUARD + numel].view(shape)
    view.copy_(torch.full((), float("nan")) if inside is None else inside)
    return buffer, view


def guarded_input(t: torch.Tensor, device: str) -> torch.Tensor:
    return guarded(tuple(t.shape), t.dtype, device, inside=t.to(device))[1]


def unguard(buffer, shape) -> tuple[torch.Tensor | None, list[int], list[int]]:
    """(the output inside ``buffer``, guard offsets written before it, after it): offsets count
    from the output's ends, 1 = the element just past it. None when it is not such a buffer."""
    numel = math.prod(shape)
    if not isinstance(buffer, torch.Tensor) or buffer.dim() != 1 or buffer.numel() != numel + 2 * GUARD:
        return None, [], []
    changed = buffer.double() != GUARD_VALUE  # NaN counts as changed
    before = (GUARD - changed[:GUARD].nonzero().flatten()).tolist()[::-1]
    after = (changed[GUARD + numel:].nonzero().flatten() + 1).tolist()
    return buffer[GUARD:GUARD + numel].view(shape), before, after


def target(device: str) -> str:
    return "cuda" if device == "cuda" else "c"


def input_count(op: str) -> int:
    """How many tensors a lab kernel of ``op`` reads (its first parameters; the output follows)."""
    from operator_runtime_testing.operators import get

    record = get(op)
    return len(record.input_shapes(record.lab_shapes[0]))


def compile_tilelang(program, device: str, inputs: int | None = None, reverse: bool = True):
    """The student's tile program for ``device``: on the CPU first made compilable for TileLang's
    C target (fragments and shared tiles as local arrays: cpu_tiles.py says why; ``inputs``,
    ``reverse``: as there)."""
    from operator_runtime.tilelang_support import import_tilelang as _tilelang

    tilelang = _tilelang()
    refuse_uninitialized(program)  # as the grader's compile does (program_check.compile_checked)
    if device != "cuda":
        from .cpu_tiles import prepare_for_cpu

        program = prepare_for_cpu(program, inputs, reverse)
    with _nvcc_output_in_errors():
        return tilelang.compile(program, target=target(device), execution_backend="cython", pass_configs=PASS_CONFIGS)


UNINITIALIZED = re.compile(r"`([^`]+)` is read before anything writes it")


def read_before_written(program) -> list[str]:
    """The names of ``program``'s tiles and local arrays that it reads before anything writes them, by
    TileLang's own analysis (VerifyBufferInit), which only warns on stderr: its report is captured here
    (build_errors.captured_log). On a GPU such a buffer starts with whatever its registers
    or shared memory held; on the C target it may start from values that hide the mistake (an
    accumulator rescaled by exp(lowest - m) = 0 on the first tile computes right from any finite start)."""
    from operator_runtime.tilelang_support import import_tilelang as _tilelang

    from .build_errors import captured_log

    tilelang = _tilelang()
    from tilelang import tvm

    module = program if isinstance(program, tvm.IRModule) else tvm.IRModule({"main": program})
    with captured_log() as log:
        tilelang.transform.VerifyBufferInit()(module)
    return list(dict.fromkeys(UNINITIALIZED.findall(log.getvalue())))


def refuse_uninitialized(program) -> None:
    """AssertionError naming the buffers ``program`` reads before writing them (read_before_written), with
    a hint; the notebook's compile and the grader's raise it alike, so both say the same words."""
    names = read_before_written(program)
    if not names:
        return
    listed = ", ".join(f"`{n}`" for n in names)
    raise AssertionError(
        f"the program: {listed} {'is' if len(names) == 1 else 'are'} read before anything writes "
        f"{'it' if len(names) == 1 else 'them'}. Hint: give each its first value before the loop that reads it "
        "(T.clear or T.fill for a tile, an assignment for a local array): on a GPU it starts with whatever the "
        "registers or shared memory held, and an accumulator rescaled by 0 on its first tile only hides that on "
        "the CPU")


def gpu_program_differs(cpu_program, gpu_program) -> bool:
    """Whether a factory's program for a GPU (gpu=True) is another program than the one it gave the
    CPU, beyond the block's thread count (``lab.launch``'s ``tl.launch_threads``, which the C target
    has no use for). A CPU grader runs the CPU program only; a factory whose GPU program differs
    is judged there by a GPU grader."""
    import re

    def text(program) -> str:
        return re.sub(r'^\s*T\.sblock_attr\(\{"tl\.launch_threads": \[[0-9, ]*\]\}\)\n', "",
                      program.script(), flags=re.M)

    return text(cpu_program) != text(gpu_program)


def bf16_program_differs(f16_program, bf16_program) -> bool:
    """Whether a factory's bfloat16 program for a GPU is another program than its float16 one beyond the
    dtype's name. A CPU runs no bfloat16 (TileLang's C target has none), so the bfloat16 program is
    judged through the float16 one it must mirror (a factory returned a wrong program for bfloat16 alone)."""
    return f16_program.script().replace("bfloat16", "float16") != bf16_program.script().replace("bfloat16", "float16")


def lower_for_gpu(program) -> None:
    """Lower ``program`` for a Hopper GPU (sm_90) as a GPU grader would, with no GPU and no nvcc: its
    layout inference and the other GPU passes run (0.3-1.4 s for a lab's program). A T.Parallel loop
    whose iterations read one another's elements (a running sum over j) runs serially and right on the
    C target, and is refused here, as it would be on a GPU."""
    from operator_runtime.tilelang_support import import_tilelang as _tilelang

    tilelang = _tilelang()
    from tilelang import tvm

    gpu = tvm.target.Target({"kind": "cuda", "arch": "sm_90"})
    with tvm.transform.PassContext(config=PASS_CONFIGS), gpu:
        tilelang.lower(program, target=gpu)


GPU_PROGRAM_DIFFERS = ("your program for a GPU (gpu=True) is not the one for the CPU beyond its thread count, and "
                       "a CPU runs only the latter: a GPU grader judges this check")


@contextlib.contextmanager
def _nvcc_output_in_errors():
    """TileLang 0.1.15 runs nvcc with its output going straight to the process's stderr (on Linux
    it captures nothing), so its "Compilation Failed!" error holds nvcc's command and the CUDA
    source but not nvcc's diagnostics: the student's feedback (build_errors.explain) could not
    name the error or give its hint (seen on the H200: a bfloat16 T.gemm accumulator). While a lab
    program compiles, nvcc's output is captured instead, and TileLang puts it into its error."""
    import subprocess

    from tilelang.jit.adapter import libgen

    def run(command, **kwargs):
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.STDOUT)
        return subprocess.run(command, **kwargs)

    saved = libgen.subprocess
    libgen.subprocess = types.SimpleNamespace(run=run, PIPE=subprocess.PIPE, STDOUT=subprocess.STDOUT,
                                              DEVNULL=subprocess.DEVNULL)
    try:
        yield
    finally:
        libgen.subprocess = saved


def run_tilelang(kernel, op: str, inputs: list[torch.Tensor], out: torch.Tensor) -> None:
    if out.numel() == 0:  # a zero-block launch is an error on the GPU, and there is nothing to do
        return
    tensors = [t.reshape(-1) if op in ELEMENTWISE else t for t in (*inputs, out)]
    if out.device.type == "cpu":
        _in_a_child(lambda: kernel(*tensors), tensors)
    else:
        kernel(*tensors)


class KernelCrashed(RuntimeError):
    """The C target's kernel killed the process it ran in."""


_FAR_OUTSIDE = ("it wrote or read far outside the buffers it was given (past the guard regions that catch a few "
                "thousand elements over), e.g. a fixed number of blocks whose stores have no guard against the size. "
                "Hint: guard every store (and load) with the size")
# What a heap the kernel wrote over says when torch touches it next (a fixed grid's stores far past a small
# output, run last block first, once came back as "Expected !size_bytes_is_heap_allocated_ to be true")
_HEAP_CORRUPTED = re.compile(r"size_bytes_is_heap_allocated_|INTERNAL ASSERT FAILED")


def _in_a_child(call, tensors: list[torch.Tensor]) -> None:
    """``call()`` in a forked child, so that a C-target kernel that stores far past every guard region (a
    fixed number of blocks with no guard, on a small input) kills the child, not the student's Jupyter
    kernel or the grader's runner: the check then says so. The child sends back the bytes of every
    storage the tensors view (the guarded buffers, guards included) through a pipe, and the parent
    copies them in (no shared memory: a sandbox may have no /dev/shm). An exception in the child
    comes back as a RuntimeError with its text."""
    import os
    import signal

    storages = [st for st in {t.untyped_storage().data_ptr(): t.untyped_storage() for t in tensors}.values()
                if st.nbytes()]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, send, leave without running the parent's cleanup
        code = 3
        try:
            os.close(read)
            for sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGFPE):
                signal.signal(sig, signal.SIG_DFL)  # TVM's handler would print a native backtrace
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)  # glibc's heap-corruption report too: the parent says what happened
            try:
                call()
                reply = [b"ok", *(_storage_bytes(st) for st in storages)]
                code = 0
            except BaseException as e:  # noqa: BLE001 - any failure goes back to the parent as text
                reply = [b"er", f"{type(e).__name__}: {e}".encode(errors="replace")[:4000]]
            for chunk in reply:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(write, view):]
        finally:
            os._exit(code)
    os.close(write)
    try:
        with os.fdopen(read, "rb") as pipe:
            reply = pipe.read()
        _, status = os.waitpid(pid, 0)
    except BaseException:  # an interrupt while a hung kernel runs: the child goes too
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status))
        if sig == signal.SIGKILL:
            raise KernelCrashed("the kernel's process was killed (out of memory, or stopped)")
        if sig == signal.SIGFPE:
            raise KernelCrashed("the kernel crashed (SIGFPE) on the CPU: an integer division by zero")
        raise KernelCrashed(f"the kernel crashed ({sig.name}) on the CPU: {_FAR_OUTSIDE}")
    if reply[:2] != b"ok" or len(reply) != 2 + sum(st.nbytes() for st in storages):
        error = reply[2:].decode(errors="replace")
        if reply[:2] == b"er" and _HEAP_CORRUPTED.search(error):  # torch's or glibc's own checks tripped after it
            raise KernelCrashed(f"the kernel corrupted its process's memory on the CPU: {_FAR_OUTSIDE}")
        raise RuntimeError(error if reply[:2] == b"er"
                           else f"the kernel's process ended early (status {os.WEXITSTATUS(status)})")
    offset = 2
    for storage in storages:
        n = storage.nbytes()
        _storage_view(storage).copy_(torch.frombuffer(bytearray(reply[offset:offset + n]), dtype=torch.uint8))
        offset += n


def _storage_view(storage) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8).set_(storage)


def _storage_bytes(storage) -> bytes:
    return _storage_view(storage).numpy().tobytes()


def order_dependent(last_first: torch.Tensor, first_last: torch.Tensor, dtype, guard: int = GUARD) -> str:
    """"" when a kernel's outputs with its blocks run last to first and first to last agree within the
    dtype's tolerance (T.atomic_add may round in another order), else why not, in words. The outputs:
    guarded buffers (``guard`` elements each side), or with ``guard=0`` the outputs alone."""
    from operator_runtime_testing.tolerances import TOLERANCES

    rtol, atol = TOLERANCES[dtype]
    a, b = last_first.double().reshape(-1), first_last.double().reshape(-1)
    same = torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if bool(same.all()):
        return ""
    i = int((~same).nonzero()[0])
    where = f"output element {i - guard}" if guard <= i < a.numel() - guard else "a guard element past the output"
    return (f"its result depends on the order its blocks run in: with the last block run first, {where} is "
            f"{a[i].item():.6g}; with the first block run first, {b[i].item():.6g} ({int((~same).sum())} elements "
            "differ). On a GPU the blocks run at once, in any order: a block may "
            "read only what it writes itself (and the inputs). Hint: combine blocks' results with T.atomic_add, or "
            "give each block its own rows")
