"""Tile-level TileLang on a laptop: make a GPU-style tile program compile for TileLang's C target.

    from operator_course.lab.cpu_tiles import compile_tiles, prepare_for_cpu
    kernel = compile_tiles(program, "c")          # = tilelang.compile(prepare_for_cpu(program), target="c", ...)
    kernel = compile_tiles(program, "cuda")       # the same program, untouched, for the GPU

Students write the program once, the way it is written for a GPU: ``T.alloc_fragment`` /
``T.alloc_shared`` tiles, ``T.copy`` between global slices and tiles (tails guarded by T.copy),
``T.Parallel`` element-wise loops over tiles, ``T.fill`` / ``T.clear``, ``T.reduce_max`` /
``T.reduce_sum`` (any dims, fragment or shared, clear or accumulate, float16 tile into float32
result), loops over the tiles of a long row (``T.serial`` or ``T.Pipelined``). Built for
``target="cuda"`` nothing here runs. Built for the C target, :func:`prepare_for_cpu` rewrites
the PrimFunc first, because TileLang 0.1.15's C target does not accept those programs as they
are (paths below are in the installed ``tilelang`` package; ``src/`` is its bundled C++ source):

1. A fragment gets no layout on the CPU. ``tilelang/cpu/pipeline.py:17`` runs
   ``MaterializeKernelLaunch(lower_thread_binding=False)``, which drops the thread placeholders
   (``src/transform/materialize_kernel_launch.cc:32-36``): there are no threads to distribute a
   fragment over. ``LayoutInference`` (``cpu/pipeline.py:40``) then asks each tile op for the
   layout of the fragments it touches, and the CPU copy returns none
   (``src/cpu/op/copy.cc:17-25``: ``InferLayout`` ``return {};``; the copy lowers to a plain
   loop, ``src/op/copy.cc:35-54``). A fragment that only ``T.copy`` / ``T.reduce_*`` /
   ``T.fill`` touch is left without a layout and ``layout_inference.cc:664-668`` fails:
   "The layout for fragment s can not be inferred correctly". (Only a ``T.Parallel`` loop,
   ``ParallelOp``, proposes a layout on the CPU, so fragment + T.Parallel alone compiles.)
2. Even with a layout, the CPU reduce accepts only ``local`` buffers
   (``src/cpu/op/reduce.cc:60-65``: "CPU reduce only supports local src and local/local.var dst
   buffers"; its header, lines 10-13: "shared/fragment paths go through alloc_fragment, which
   CPU does not have"), and so ``T.reduce_sum`` of a shared tile fails too:
   ``tilelang/language/reduce_op.py:103-105`` stages shared operands through
   ``alloc_fragment``; only local-to-local reductions are emitted directly (lines 77-90).
   The CPU reduce also requires src and dst dtypes to match (``reduce.cc:84-87``), where the CUDA
   one accumulates a float16 tile into a float32 result.
3. ``T.fill`` / ``T.clear`` on the CPU accept only local and global buffers
   (``src/cpu/op/fill.cc:22-30``), so filling a shared tile fails.

On the CPU a kernel's blocks run one after another in one thread (the grid becomes serial
loops), so "shared by the block" and "held by its threads" both mean "a local array of the
program", which is the scope every CPU tile op is written for. The rewrite is therefore:

a. every ``local.fragment``, ``shared`` and ``shared.dyn`` tile becomes a ``local`` array (the
   backing data Var is replaced; ``tvm.tirx.stmt_functor.substitute`` remaps every buffer
   that uses it, tile-op regions included). ``T.annotate_layout`` entries for them are dropped.
b. every ``T.Parallel`` loop nest that touches a tile becomes ``T.serial`` loops (nests over
   global buffers only are left as they are). TileLang's pre-lowering check rejects a local
   buffer indexed by a ``T.Parallel`` variable (``tilelang/analysis/parallel_local_index_checker.py:41-56``,
   run from ``tilelang/engine/semantic_check.py:30``), and on the CPU a ``T.Parallel`` loop is
   lowered to a serial loop anyway. The iterations of a ``T.Parallel`` loop are independent by
   contract, so the serial order changes no result.
c. a reduce whose tile dtype differs from its result's (a float16 tile summed into float32) reads
   a cast copy of the tile, which is what the CUDA reduce computes.

Everything stays a tile op: TileLang's own CPU lowering (LowerTileOp) expands T.copy with its tail
guard, T.fill, and the reductions. Nothing is rewritten at the source level, and the GPU build
never sees this module.

Out-of-range stores in the student's own code (e.g. ``Y[bx * TILE + i] = a[i]`` in a loop over a
whole tile, no ``if``): on the C target TileLang's ``LegalizeSafeMemoryAccess``
(``cpu/pipeline.py:52``) wraps each global load/store it cannot prove in range in an ``if``
(``src/transform/legalize_safe_memory_access.cc:117-124, 170-177``; global buffers only), with or
without this rewrite, and T.Parallel or T.serial alike. The labs compile with
``tl.disable_safe_memory_legalize`` (``kernels.PASS_CONFIGS``), which turns that pass off
(``legalize_safe_memory_access.cc:827-830``): then such a store really writes past the end of the
output (into the lab's guard region), while ``T.copy`` tails stay guarded (T.copy emits its own
``if``). tests/grader/test_cpu_tiles.py checks both.

Also compiles and computes correctly after the rewrite (checked by hand, not in the tests):
``T.Pipelined(..., num_stages=2)`` (the CPU pipeline has no software pipelining: an ordinary
loop), ``T.reduce_sum`` of shared tiles, ``T.fill`` of a shared tile, ``T.annotate_layout`` on a
fragment (dropped), ``T.gemm`` of shared tiles into a fragment, 2-d grids, and the repo's own GPU
softmax programs (ops/softmax/tilelang/softmax.py, cached and online strategies).

Limits (still fail on the C target after the rewrite, with TileLang's error):
- ``T.reduce_max/min/absmax`` with ``annotations={"nan_propagate": True}`` on float16/bfloat16:
  "CPU reduce does not support nan_propagate=True for float16/bfloat16 max/min/absmax: the CPU
  codegen has no __hmax_nan/__hmin_nan equivalent intrinsics (CUDA-only)" (``reduce.cc:40-46``).
- ``T.reduce_*(..., batch=2)``: "Check failed: op.batch == 1 (2 vs. 1) : CPU reduce: batch > 1 is
  a GPU AllReduce barrier concept and is not supported on CPU" (``reduce.cc:70-72``).
- a thread index (``T.get_thread_binding()``): "T.Kernel body references thread index `tx`, but
  target `c` has no SIMT threads. Express the computation with tile-level operators (T.Parallel,
  T.copy, ...) instead of per-thread indexing." (MaterializeKernelLaunch).
- ``T.alloc_reducer`` (the ``local.reducer`` scope, left alone here): "CPU fill only supports local
  and global buffers, but got dst scope `local.fragment`." (the same without this rewrite: the
  reducer is materialized as a fragment after it runs).
- frontend shape checks are the target's-independent ones: ``T.copy(X[i], tile)`` of a 1-d
  global into a (1, TILE) tile raises a bare AssertionError in ``tilelang/utils/language.py``
  ``to_buffer_region`` on any target (index a 2-d global, ``X[r, k * TILE]``, instead).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

TILE_SCOPES = ("local.fragment", "shared", "shared.dyn")  # what prepare_for_cpu turns into "local"
CPU_TARGETS = ("c", "llvm")  # TileLang's CPU targets
_REDUCE_OP = "tl.tileop.reduce"


def is_cpu_target(target) -> bool:
    """Whether ``target`` ("c", "llvm", a tvm Target, or a {"kind": ...} dict) is a CPU target."""
    if isinstance(target, dict):
        kind = target.get("kind", "")
    elif isinstance(target, str):
        kind = target.split()[0] if target.strip() else ""
    else:
        kind = getattr(getattr(target, "kind", None), "name", str(target))
    return kind in CPU_TARGETS


def prepare_for_cpu(program, inputs: int | None = None, reverse: bool = True):
    """The tile program ``program`` (a ``T.prim_func`` PrimFunc, or an IRModule of them)
    rewritten so TileLang's C target compiles it (see the module docstring). Idempotent; only
    for CPU targets: a GPU build takes the program as written. ``inputs``: how many leading tensor
    parameters are the kernel's inputs (a lab's: its record's), refused as the target of a store;
    ``reverse``: the grid's blocks run last to first (_reverse_blocks), else first to last."""
    import tilelang  # noqa: F401  (puts TileLang's bundled tvm on the path)
    from tvm import IRModule, tirx

    if isinstance(program, IRModule):
        funcs = {gv: (_prepare_func(f, inputs, reverse) if isinstance(f, tirx.PrimFunc) else f)
                 for gv, f in program.functions.items()}
        return IRModule(funcs, attrs=program.attrs)
    if not isinstance(program, tirx.PrimFunc):
        raise TypeError(f"prepare_for_cpu takes a T.prim_func (a tvm PrimFunc), got {type(program).__name__}; "
                        "a @tilelang.jit function compiles itself: write the kernel as a T.prim_func factory")
    return _prepare_func(program, inputs, reverse)


def compile_tiles(program, target: str = "c", **kwargs):
    """``tilelang.compile`` for ``target``, with :func:`prepare_for_cpu` applied on a CPU target
    only. kwargs go to tilelang.compile (execution_backend defaults to "cython")."""
    import tilelang

    kwargs.setdefault("execution_backend", "cython")
    if is_cpu_target(target):
        program = prepare_for_cpu(program)
    return tilelang.compile(program, target=target, **kwargs)


def _prepare_func(func, inputs: int | None, reverse: bool):
    from tvm import ir, tirx

    # (a) tiles -> local arrays: one new data Var per tile; substitute() rebuilds every Buffer
    # over it (allocations, loads/stores, tl.region arguments of tile ops).
    vmap = {}

    def collect(node):
        buffers = ()
        if isinstance(node, tirx.SBlock):
            buffers = node.alloc_buffers
        elif isinstance(node, (tirx.AllocBuffer, tirx.DeclBuffer)):
            buffers = (node.buffer,)
        for buf in buffers:
            if buf.scope() in TILE_SCOPES and buf.data not in vmap:
                vmap[buf.data] = tirx.Var(buf.data.name, ir.PointerType(ir.PrimType(buf.dtype), "local"))

    tirx.stmt_functor.post_order_visit(func.body, collect)
    for_each_parallel_nest(func.body, _refuse_shared_writes)  # before (a): the tiles' own scopes
    _refuse_cross_block_updates(func.body)
    if inputs:
        _refuse_input_writes(func, inputs)
    body = tirx.stmt_functor.substitute(func.body, vmap) if vmap else func.body

    # (b) a T.Parallel nest that touches a tile -> T.serial loops. Nests over global buffers only
    # (and reducers) are left to TileLang's own CPU lowering.
    new_vars = list(vmap.values())

    def serialize_nest(node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL and _touches(node, new_vars):
            return tirx.stmt_functor.ir_transform(node, None, _serial, ["tirx.For"])
        return None

    body = tirx.stmt_functor.ir_transform(body, serialize_nest, None, ["tirx.For"])

    # (c) mixed-dtype reduces; block annotations that name a retired Var (T.annotate_layout).
    extra_allocs = {}  # src buffer data Var -> cast copies to allocate next to it

    def rewrite(node):
        if isinstance(node, tirx.Evaluate):
            return _widen_reduce(node, extra_allocs)
        if isinstance(node, tirx.SBlock):
            return _fix_block(node, vmap, extra_allocs)
        return None

    body = tirx.stmt_functor.ir_transform(body, None, rewrite, ["tirx.Evaluate", "tirx.SBlock"])
    if extra_allocs:
        raise RuntimeError("prepare_for_cpu: a reduce's tile is not allocated in any block: "
                           + ", ".join(b.name for bufs in extra_allocs.values() for b in bufs))
    if reverse and "oprt_blocks_reversed" not in (func.attrs or {}):  # (prepare_for_cpu is idempotent)
        body = _reverse_blocks(body)
        func = func.with_attr("oprt_blocks_reversed", 1)
    func = func.with_body(body)
    if inputs and "oprt_reads_checked" not in (func.attrs or {}):
        func = mark_out_of_bounds_reads(func, inputs).with_attr("oprt_reads_checked", 1)
    return func


def _reverse_blocks(body):
    """The grid's blocks run last to first on the C target (bx -> extent - 1 - bx), as a GPU may run them:
    a kernel whose blocks read what other blocks write (an output element one block stores and the next
    updates, a row's partials handed on, an earlier row's result) gets it wrong here too, however the
    reads are written. A kernel whose blocks touch only their own elements computes the same."""
    from tvm import tirx

    def reverse(node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.THREAD_BINDING \
                and str(node.thread_binding.thread_tag).startswith("blockIdx"):
            v = node.loop_var
            flipped = tirx.stmt_functor.substitute(node.body, {v: node.min + node.extent - 1 - v})
            return tirx.For(v, node.min, node.extent, node.kind, flipped, node.thread_binding, node.annotations,
                            node.step)
        return None

    return tirx.stmt_functor.ir_transform(body, None, reverse, ["tirx.For"])


def reads_output(program) -> bool:
    """Whether a lab program loads from its output (its last tensor), a plain load or a region T.copy
    reads. Blocks can hand results to each other only through memory they share that one writes and
    another reads: the output (stores into the inputs are refused). A program that never reads it
    computes the same in any block order."""
    from tvm import IRModule, tirx

    funcs = [f for f in program.functions.values() if isinstance(f, tirx.PrimFunc)] \
        if isinstance(program, IRModule) else [program]
    reads = 0  # loads of the output, less the starts of the regions T.copy only writes (a start is a load)
    for func in funcs:
        params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
        if not params:
            continue
        out = params[-1].data

        def visit(node):
            nonlocal reads
            region = _region(node)
            if region is not None and not region.mask & 1 and region.start.buffer.data.same_as(out):
                reads -= 1
            elif isinstance(node, tirx.BufferLoad) and node.buffer.data.same_as(out):
                reads += 1

        tirx.stmt_functor.post_order_visit(func.body, visit)
    return reads > 0


class InputWrite(ValueError):
    """A store into one of the kernel's inputs."""


def _refuse_input_writes(func, count: int) -> None:
    """A lab kernel's inputs (its first ``count`` tensors) are read-only: a store into one changes the
    caller's tensor, and blocks that hand partial results through it race on a GPU (the C target runs
    them in order). Refused, as the CUDA check refuses a store into an input."""
    from tvm import tirx

    params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    inputs = {b.data: b.name for b in params[:count]}

    stored = []  # the inputs stored into (raised out here: an error inside TVM's visitor comes out as RuntimeError)

    def visit(node):
        target = None
        if isinstance(node, tirx.BufferStore):
            target = node.buffer
        elif (region := _region(node)) is not None and region.mask & 2:
            target = region.start.buffer
        if target is not None and target.data in inputs:
            stored.append(inputs[target.data])

    tirx.stmt_functor.post_order_visit(func.body, visit)
    if stored:
        name = stored[0]
        raise InputWrite(f"your program stores into {name}, an input: the inputs are read-only (the caller's "
                         f"tensor would change, and blocks that hand results to each other through {name} race "
                         "on a GPU). Keep partial results in local, fragment or shared buffers, and write only "
                         "the output")


class ParallelRace(ValueError):
    """A T.Parallel loop whose iterations write one element: on a GPU they run at once."""


def for_each_parallel_nest(stmt, visit) -> None:
    """``visit`` each outermost T.Parallel loop of ``stmt`` (a nest T.Parallel(M, N) is one For in another)."""
    from tvm import tirx

    def walk(node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            visit(node)
            return node  # (stop: its inner loops belong to this nest)
        return None

    tirx.stmt_functor.ir_transform(stmt, walk, None, ["tirx.For"])


def _refuse_shared_writes(nest) -> None:
    """The iterations of a T.Parallel loop are independent by contract: on a GPU its threads run them
    at once, while the C target runs them in order, where a loop-carried update computes the right
    answer. So the C target refuses, as the GPU would fail:
    - a store whose element does not vary with each parallel variable around it (``s[0]``, also
      ``s[j // 65536]``: TVM's analyzer decides over the loop's range), unless under ``if j == c``
      for an index strictly monotone in j (one iteration), in any scope but a thread's own scratch
      (T.alloc_local): every iteration writes the same element, a race;
    - a read of such an element (any scope) before the iteration has written it: a loop-carried
      value (``s[0] = s[0] + x[j]``, also through ``v = s[0]`` or another local buffer); a sum needs
      T.reduce_sum.
    Variables bound in the body (``j = bx * TILE + i``) are followed; T.Parallel loops nested under
    others, serial loops between them included, add their variables."""
    from tvm import tirx

    ix = _Indexing(nest)
    expand, varies, pins, element = ix.expand, ix.varies, ix.pins, ix.element

    shared: dict[tuple, str] = {}  # element -> its text, written by every iteration of some loop

    def writes(node, loops, pinned):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            return writes(node.body, loops + _racing(node), pinned)
        if isinstance(node, tirx.IfThenElse):
            extra = {v for v, _ in loops if pins(node.condition, v, loops)}
            writes(node.then_case, loops, pinned | extra)
            if node.else_case is not None:
                writes(node.else_case, loops, pinned)
            return
        if isinstance(node, tirx.BufferStore):
            missing = [v for v, _ in loops if not any(v.same_as(p) for p in pinned)
                       and not any(varies(i, v, loops) for i in node.indices)]
            if missing:
                text = f"{node.buffer.name}[{', '.join(str(i) for i in node.indices)}]"
                if node.buffer.scope() not in ("local", "local.var"):
                    itself = []
                    tirx.stmt_functor.post_order_visit(expand(node.value), lambda n: itself.append(n) if isinstance(
                        n, tirx.BufferLoad) and element(n) == element(node) else None)
                    raise ParallelRace(_race_message(missing, text, "reads and writes" if itself else "writes"))
                shared[element(node)] = text
            return
        for child in _children(node):
            writes(child, loops, pinned)

    writes(nest, [], set())
    if not shared:
        return

    def loads(expr, defined, loops):
        found = []
        tirx.stmt_functor.post_order_visit(expand(expr), lambda n: found.append(n)
                                           if isinstance(n, tirx.BufferLoad) else None)
        for load in found:
            key = element(load)
            if key in shared and key not in defined:
                raise ParallelRace(_race_message([v for v, _ in loops] or [nest.loop_var], shared[key],
                                                 "reads and writes"))

    def reads(node, defined: set, loops):
        """Program order within one iteration: a shared element read before this iteration wrote it."""
        if isinstance(node, tirx.For):
            inner = loops + _racing(node) if node.kind == tirx.ForKind.PARALLEL else loops
            return reads(node.body, defined, inner)
        if isinstance(node, tirx.IfThenElse):
            loads(node.condition, defined, loops)
            reads(node.then_case, set(defined), loops)
            if node.else_case is not None:
                reads(node.else_case, set(defined), loops)
            return
        if isinstance(node, tirx.BufferStore):
            loads(node.value, defined, loops)
            for i in node.indices:
                loads(i, defined, loops)
            defined.add(element(node))
            return
        if isinstance(node, tirx.Bind):
            return loads(node.value, defined, loops)
        if isinstance(node, tirx.Evaluate):
            return loads(node.value, defined, loops)
        for child in _children(node):
            reads(child, defined, loops)

    reads(nest, set(), [])


class _Indexing:
    """Index arithmetic over the loop and block variables of ``stmt``: whether an element moves with a
    variable, whether a condition pins a variable to one value. Variables bound in ``stmt``
    (``j = bx * TILE + i``) are followed."""

    def __init__(self, stmt):
        from tvm import tirx

        self.bound = {}  # tirx.Bind: a variable bound to an expression
        tirx.stmt_functor.post_order_visit(stmt, lambda n: self.bound.__setitem__(n.var, n.value)
                                           if isinstance(n, tirx.Bind) else None)

    def expand(self, expr):
        from tvm import tirx

        for _ in range(8):  # bound variables in bound values, a few levels deep
            uses_bound = []
            tirx.stmt_functor.post_order_visit(expr, lambda n: uses_bound.append(n)
                                               if isinstance(n, tirx.Var) and n in self.bound else None)
            if not uses_bound:
                break
            expr = tirx.stmt_functor.substitute(expr, self.bound)
        return expr

    @staticmethod
    def analyzer(loops):
        from tvm import arith, ir

        a = arith.Analyzer()
        for var, extent in loops:
            a.bind(var, ir.Range.from_min_extent(0, extent - 1))  # var and var + 1 both in range
        return a

    @staticmethod
    def next_of(expr, var):
        from tvm import tirx

        return tirx.stmt_functor.substitute(expr, {var: var + tirx.const(1, var.dtype)})

    def varies(self, index, var, loops) -> bool:
        """Whether the element ``index`` moves with ``var`` (not provably the same for var and var + 1)."""
        e = self.expand(index)
        return not self.analyzer(loops).can_prove_equal(self.next_of(e, var), e)

    def pins(self, cond, var, loops) -> bool:
        """``cond`` holds for one value of ``var`` at most: a == b, one side strictly monotone in var and
        the other not moving with it."""
        from tvm import tirx

        if not isinstance(cond, tirx.EQ):
            return False
        a, sides = self.analyzer(loops), (self.expand(cond.a), self.expand(cond.b))
        for side, other in (sides, sides[::-1]):
            e1 = self.next_of(side, var)
            if (a.can_prove(e1 > side) or a.can_prove(e1 < side)) and a.can_prove_equal(self.next_of(other, var), other):
                return True
        return False

    def element(self, load_or_store) -> tuple:
        return load_or_store.buffer.data, tuple(str(self.expand(i)) for i in load_or_store.indices)


def _refuse_cross_block_updates(body) -> None:
    """The C target runs a kernel's blocks one after another; a GPU runs them at once. A block that
    reads an element of a global buffer and stores it (``Y[bx] = Y[bx] + partial``, also through a
    local copy, or a region T.copy reads into a tile and back) while other blocks do the same (the element does not move with a block index of a
    grid dim that has more than one block, and no ``if by == 0`` pins it) gets the right sum here and
    loses updates there. Refused, as a GPU would fail; T.atomic_add is how blocks combine results."""
    from tvm import arith, ir, tirx

    blocks = []  # (variable, extent) of each block index of T.Kernel with more than one block

    def launch(node):  # T.Kernel's block indices: loops bound to blockIdx.*
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.THREAD_BINDING \
                and str(node.thread_binding.thread_tag).startswith("blockIdx") \
                and not (isinstance(node.extent, tirx.IntImm) and node.extent.value == 1):
            blocks.append((node.loop_var, node.extent))

    tirx.stmt_functor.post_order_visit(body, launch)
    if not blocks:
        return
    ix = _Indexing(body)
    # the global elements the kernel reads: its loads, less the starts of the regions T.copy writes
    # (a region's start is a load in the IR), plus the regions it reads
    reads = Counter()

    def read(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer.scope() == "global":
            reads[ix.element(node)] += 1
        region = _region(node)
        if region is not None and region.start.buffer.scope() == "global":
            reads[ix.element(region.start)] += (region.mask & 1) - 1

    tirx.stmt_functor.post_order_visit(body, read)

    def written(node) -> list:
        """The global elements ``node`` stores: a BufferStore's, or the start of a region T.copy writes."""
        if isinstance(node, tirx.BufferStore):
            return [node] if node.buffer.scope() == "global" else []
        if isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call):
            regions = [_region(a) for a in node.value.args]
            return [r.start for r in regions if r is not None and r.mask & 2 and r.start.buffer.scope() == "global"]
        return []

    def check(store, pinned):
        loads = []
        for i in store.indices:
            tirx.stmt_functor.post_order_visit(ix.expand(i), lambda n: loads.append(n) if isinstance(n, tirx.BufferLoad) else None)
        if loads:  # an index read from a buffer (`r[0]` holding bx): not decided here; the reversed block
            return  # order decides what it does (_reverse_blocks)
        shared = [v for v, _ in blocks if not any(v.same_as(p) for p in pinned)
                  and not any(ix.varies(i, v, blocks) for i in store.indices)]
        if shared:
            names = ", ".join(v.name for v in shared)
            text = f"{store.buffer.name}[{', '.join(str(i) for i in store.indices)}]"
            raise ParallelRace(
                f"every block along {names} reads and writes {text}: on a GPU the blocks run at once, so their "
                f"updates of {text} race and all but one are lost (the CPU runs the blocks in order, which would "
                f"hide it). A block may update only its own elements (indexed by {names}); to combine the blocks' "
                "results use T.atomic_add, or give each block its own rows. (TileLang calls the block indices bx, by, "
                "bz in the grid's order, whatever names your `with T.Kernel(...) as ...` gives them.)")

    def pinned_by(cond) -> set:
        """The block indices ``cond`` holds for one value of at most (``by == 0``, ``by < 1``, ``by == 0 and ...``)."""
        a = arith.Analyzer()
        for var, extent in blocks:  # the whole range (ix.analyzer leaves room for var + 1)
            a.bind(var, ir.Range.from_min_extent(0, extent))
        cond = a.simplify(ix.expand(cond))
        with a.constraint_scope(cond):
            bounded = {v for v, _ in blocks if (b := a.const_int_bound(v)).min_value == b.max_value}
        return bounded | {v for v, _ in blocks if ix.pins(cond, v, blocks)}

    def overlap(node, pinned):
        """A tile T.copy stores whose place moves, from one block to the next, by less than the tile in
        every dim (C[by, bx] for a 64 x 64 tile): neighbouring blocks store over each other's results."""
        if not (isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call)):
            return
        for region in filter(None, map(_region, node.value.args)):
            start, mask, _ = region
            if not mask & 2 or start.buffer.scope() != "global":
                continue
            extents = [1] * (len(start.indices) - len(region.extents)) + list(region.extents)
            for v, _ in blocks:
                if any(v.same_as(q) for q in pinned):
                    continue
                steps = [ix.analyzer(blocks).simplify(ix.next_of(ix.expand(i), v) - ix.expand(i)) for i in start.indices]
                if not all(isinstance(d, tirx.IntImm) and isinstance(e, tirx.IntImm) for d, e in zip(steps, extents)):
                    continue
                moves = [d.value for d in steps]
                if any(moves) and all(abs(d) < e.value for d, e in zip(moves, extents)):
                    shape = " x ".join(str(e.value) for e in extents)
                    text = f"{start.buffer.name}[{', '.join(str(i) for i in start.indices)}]"
                    raise ParallelRace(
                        f"neighbouring blocks along {v.name} store overlapping tiles of {start.buffer.name}: the "
                        f"{shape} tile stored at {text} moves by {tuple(moves)} from one block to the next, less "
                        f"than its size, so on a GPU the blocks overwrite each other's results (the CPU runs them "
                        f"one after another, and the last one's survive). Each block must store its own tile: "
                        f"scale the block indices by the tile's size ({start.buffer.name}[by * BM, bx * BN] for a "
                        f"BM x BN tile of a matrix, [bx * TILE] for a TILE-long one)")

    def stores(node, pinned):
        if isinstance(node, tirx.IfThenElse):
            stores(node.then_case, pinned | pinned_by(node.condition))
            if node.else_case is not None:  # `if by != 0: ... else: <here>`
                stores(node.else_case, pinned | pinned_by(tirx.Not(node.condition)))
            return
        overlap(node, pinned)
        for store in written(node):
            if reads[ix.element(store)] > 0:
                check(store, pinned)
        for child in _children(node):
            stores(child, pinned)

    stores(body, set())


class _Region(NamedTuple):
    start: object  # the BufferLoad at a ``T.region``'s start
    mask: int      # its access: 1 read, 2 write, 3 both
    extents: list  # its size, per dim (the trailing ones)


def _region(node) -> _Region | None:
    """A ``T.region`` call's _Region, else None."""
    from tvm import ir, tirx

    if isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and node.op.name == "tl.region":
        return _Region(node.args[0], int(node.args[1]), list(node.args[2:]))
    return None


def _racing(loop) -> list:
    """A T.Parallel loop's (variable, extent), unless it has one iteration (`T.Parallel(1)`, a row's max
    in `m[0]`): nothing runs beside it, so nothing races."""
    from tvm import tirx

    one = isinstance(loop.extent, tirx.IntImm) and loop.extent.value == 1
    return [] if one else [(loop.loop_var, loop.extent)]


def _race_message(missing, element: str, how: str) -> str:
    names = ", ".join(v.name for v in missing)
    return (f"every iteration of the T.Parallel loop over {names} {how} {element}: on a GPU the iterations run at "
            f"once, on different threads, so their updates of {element} race and all but one are lost (the CPU runs "
            f"them in order, which would hide it). A T.Parallel iteration may write only its own elements (indexed "
            f"by {names}); to combine a tile into one value use T.reduce_sum / T.reduce_max, or a T.serial loop")


def _children(node) -> list:
    from tvm import tirx

    if isinstance(node, tirx.SeqStmt):
        return list(node.seq)
    if isinstance(node, tirx.SBlockRealize):
        return [node.block]
    if isinstance(node, tirx.SBlock):
        return [node.body] + ([node.init] if node.init is not None else [])
    body = getattr(node, "body", None)  # loops, attributes, buffer declarations, lets
    return [body] if isinstance(body, tirx.Stmt) else []


def _serial(node):
    from tvm import tirx

    if node.kind != tirx.ForKind.PARALLEL:
        return None
    return tirx.For(node.loop_var, node.min, node.extent, tirx.ForKind.SERIAL, node.body, None, node.annotations,
                    node.step)


def _touches(stmt, data_vars) -> bool:
    """Whether ``stmt`` loads or stores a buffer backed by one of ``data_vars``."""
    from tvm import tirx

    found = []

    def visit(node):
        if not found and isinstance(node, (tirx.BufferLoad, tirx.BufferStore)) \
                and any(node.buffer.data.same_as(v) for v in data_vars):
            found.append(node)

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return bool(found)


def _region_parts(region):
    """(BufferLoad at the region's start, access mask, extents) of a tl.region call."""
    return region.args[0], region.args[1], list(region.args[2:])


def _widen_reduce(stmt, extra_allocs):
    """A tl.tileop.reduce whose src dtype is not its dst dtype, as: cast the tile into a local
    copy of the dst dtype (a serial loop nest), then reduce the copy. None: leave it."""
    from tvm import ir, tirx

    call = stmt.value
    if not (isinstance(call, tirx.Call) and isinstance(call.op, ir.Op) and call.op.name == _REDUCE_OP):
        return None
    (src_load, src_mask, extents), (dst_load, _, _) = _region_parts(call.args[0]), _region_parts(call.args[1])
    src, dst = src_load.buffer, dst_load.buffer
    if src.dtype == dst.dtype or src.scope() != "local":
        return None
    wide = tirx.decl_buffer(extents, dst.dtype, name=f"{src.name}_{dst.dtype}", scope="local")
    loop_vars = [tirx.Var(f"c{k}", ext.dtype) for k, ext in enumerate(extents)]
    index_at = [base + v for base, v in zip(src_load.indices, loop_vars)]
    cast = tirx.BufferStore(wide, tirx.Cast(dst.dtype, tirx.BufferLoad(src, index_at)), loop_vars)
    for v, ext in reversed(list(zip(loop_vars, extents))):
        cast = tirx.For(v, tirx.const(0, ext.dtype), ext, tirx.ForKind.SERIAL, cast)
    zero = [tirx.const(0, ext.dtype) for ext in extents]
    region = tirx.Call("handle", call.args[0].op, [tirx.BufferLoad(wide, zero), src_mask, *extents])
    reduce = tirx.Call(call.dtype, call.op, [region, *call.args[1:]], annotations=call.annotations)
    extra_allocs.setdefault(src.data, []).append(wide)
    return tirx.SeqStmt([cast, tirx.Evaluate(reduce)])


def _fix_block(block, vmap, extra_allocs):
    """Allocate the cast copies next to their tiles; drop layout_map entries for retired Vars."""
    from tvm import tirx

    allocs = list(block.alloc_buffers)
    for buf in block.alloc_buffers:
        allocs.extend(extra_allocs.pop(buf.data, []))
    annotations = dict(block.annotations)
    layout_map = annotations.get("layout_map")
    if layout_map is not None:
        kept = {var: layout for var, layout in layout_map.items() if var not in vmap}
        if kept:
            annotations["layout_map"] = kept
        else:
            del annotations["layout_map"]
    if len(allocs) == len(block.alloc_buffers) and len(annotations) == len(block.annotations) \
            and (layout_map is None or len(annotations.get("layout_map", {})) == len(layout_map)):
        return None
    return tirx.SBlock(block.iter_vars, block.reads, block.writes, block.name_hint, block.body, block.init,
                       allocs, block.match_buffers, annotations)


# ---- reads past an input's bounds, on the C target ----
# A load the student indexes past an input's shape reads the check's NaN guard at the tensor's ends, or
# another row inside it (Q[b, h, i, d] with d >= dim is row i + 1's data), and either can vanish: the value
# is masked afterwards (a key past seq scored, then set to -inf) or multiplied by a zero-padded column. On a
# GPU the same load reads another tensor or faults. Each statement that loads an input is preceded by a test
# of those loads' indices against the input's shape (under the conditions that guard them: the branch of an
# if_then_else or a Select, the right side of && and ||); a load out of bounds stores OUT_OF_BOUNDS_MARK - k
# (input k) into the element just past the output's last, the check's guard, where the judge reads it.
OUT_OF_BOUNDS_MARK = -64.0  # exact in every lab dtype, apart from the guard's own value (kernels.GUARD_VALUE)


def _loads_with_guards(expr, inputs: dict, guard, found: list) -> None:
    """Append (input index, load, guarding condition or None) for each load of an input in ``expr``."""
    from tvm import ir, tirx

    def both(a, b):
        return b if a is None else tirx.And(a, b)

    def walk(e, g):
        if isinstance(e, tirx.BufferLoad):
            for i in e.indices:
                walk(i, g)
            if e.buffer.data in inputs:
                found.append((inputs[e.buffer.data], e, g))
        elif isinstance(e, tirx.Call) and e.op.same_as(ir.Op.get("tirx.if_then_else")):
            cond, a, b = e.args
            walk(cond, g)
            walk(a, both(g, cond))
            walk(b, both(g, tirx.Not(cond)))
        elif isinstance(e, tirx.Select):
            walk(e.condition, g)
            walk(e.true_value, both(g, e.condition))
            walk(e.false_value, both(g, tirx.Not(e.condition)))
        elif isinstance(e, (tirx.And, tirx.Or)):  # C's && and || evaluate their right side only when needed
            walk(e.a, g)
            walk(e.b, both(g, e.a if isinstance(e, tirx.And) else tirx.Not(e.a)))
        elif isinstance(e, tirx.Call):
            for a in e.args:
                walk(a, g)
        elif isinstance(e, tirx.Let):
            walk(e.value, g)
            walk(e.body, g)
        else:
            for field in ("a", "b", "value", "base", "stride"):  # binary ops, Not, Cast, Ramp / Broadcast
                child = getattr(e, field, None)
                if isinstance(child, tirx.PrimExpr) and not isinstance(e, tirx.Var):
                    walk(child, g)

    walk(expr, guard)


def mark_out_of_bounds_reads(func, count: int):
    """``func`` with each statement that loads one of its first ``count`` tensors (a lab's inputs) preceded
    by the test described above, storing into the tensor after them (the output). Unchanged when it has
    no such load, or no output tensor."""
    from tvm import tirx

    params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    if len(params) <= count:
        return func
    inputs, out = {b.data: k for k, b in enumerate(params[:count])}, params[count]

    def mark(node):
        if not isinstance(node, tirx.BufferStore):
            return None
        found: list = []
        for e in (*node.indices, node.value):
            _loads_with_guards(e, inputs, None, found)
        if not found:
            return None
        tests = []
        for k, load, guard in found:
            shape = params[k].shape
            outside = None
            for index, extent in zip(load.indices, shape):
                bad = tirx.Or(index < 0, index >= extent)
                outside = bad if outside is None else tirx.Or(outside, bad)
            if outside is None:
                continue
            when = outside if guard is None else tirx.And(guard, outside)
            # the element just past the output's last (a negative index would be read Python's way, from the end)
            at = [extent - 1 for extent in out.shape[:-1]] + [out.shape[-1]]
            mark_value = tirx.FloatImm(out.dtype, OUT_OF_BOUNDS_MARK - k)
            tests.append(tirx.IfThenElse(when, tirx.BufferStore(out, mark_value, at), None))
        return tirx.SeqStmt([*tests, node]) if tests else None

    return func.with_body(tirx.stmt_functor.ir_transform(func.body, None, mark, ["tirx.BufferStore"]))
