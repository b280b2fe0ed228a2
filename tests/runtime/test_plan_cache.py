"""The eager calls' plan cache (operator_runtime/_internal/plan_cache.py): repeated layouts hit
it, keys never collide (layouts, dtypes, attributes, backends), it is bounded, it keeps no
caller's tensor alive, hits raise the same errors as misses, and threads never share a plan."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest
import torch

import operator_runtime as ort
from cases import exact, extra_atol, reference
from operator_runtime._internal import plan_cache
from operator_runtime_testing.assertions import assert_matches_torch

# Awkward sizes: one element, odd lengths, an empty dim, a 0-d tensor.
SHAPES = [(1,), (7,), (3, 5), (1, 1023), (0,), (4, 0), (2, 3, 5), ()]


@pytest.fixture(autouse=True)
def empty_cache():
    plan_cache.cache_clear()
    yield
    plan_cache.cache_clear()


def check(op, result, *inputs, **attrs):
    assert_matches_torch(result, reference(op, *inputs, **attrs), exact=exact(op),
                         extra_atol=extra_atol(op, *inputs, **attrs), what=op)


def randn(shape, gen, device, dtype=torch.float32):
    return torch.randn(shape, generator=gen).to(device=device, dtype=dtype)


def calls(x, y):
    """One eager call of each op on x (and y for vector_add), with its reference check."""
    d = -1 if x.dim() else 0
    return [
        ("copy", lambda: ort.copy(x), (x,), {}),
        ("vector_add", lambda: ort.vector_add(x, y), (x, y), {}),
        ("reduce_sum", lambda: ort.reduce_sum(x, d), (x,), {"dim": d}),
        ("reduce_sum", lambda: ort.reduce_sum(x, d, keepdim=True), (x,), {"dim": d, "keepdim": True}),
        ("softmax", lambda: ort.softmax(x, d), (x,), {"dim": d}),
    ]


def test_repeated_calls_hit(backend, device, gen):
    x, out = randn((64, 64), gen, device), torch.empty(64, 64, device=device)
    ort.softmax(x, -1, out=out, backend=backend)
    before = plan_cache.cache_info()
    assert before.misses == 1 and before.size == 1
    for _ in range(5):
        x = randn((64, 64), gen, device)  # fresh values and buffers, the same layout
        check("softmax", ort.softmax(x, -1, out=out, backend=backend), x, dim=-1)
    after = plan_cache.cache_info()
    assert (after.hits - before.hits, after.misses, after.size) == (5, 1, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["f32", "f16"])
def test_awkward_sizes_repeated(backend, device, gen, dtype):
    """Each shape twice (a miss, then a hit on new buffers), all ops, results checked each time."""
    for _ in range(2):
        for shape in SHAPES:
            x, y = randn(shape, gen, device, dtype), randn(shape, gen, device, dtype)
            for op, call, inputs, attrs in calls(x, y):
                check(op, call(), *inputs, **attrs)
    info = plan_cache.cache_info()
    assert info.hits > 0 and info.size <= info.maxsize


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_hit_with_another_storage_offset(backend, device, gen, dtype):
    """The key holds shapes and strides, not where the data start: a plan made for tensors on a
    16-byte boundary is handed tensors one element past it (same layout), and must still be right
    (tilelang's copy picks its vectorized kernel per call: AlignedPlan)."""
    n = 3 * 4096 + 5  # whole blocks and a short one
    for offset in (0, 1, 0, 3):
        x = randn(n + offset, gen, device, dtype)[offset:]
        out = torch.empty(n + offset, dtype=dtype, device=device)[offset:]
        check("copy", ort.copy(x, out=out, backend=backend), x)
        y = randn(n + offset, gen, device, dtype)[offset:]
        check("vector_add", ort.vector_add(x, y, backend=backend), x, y)
    assert plan_cache.cache_info().hits >= 4


def test_keys_do_not_collide(backend, device, gen):
    """Same shapes, different strides / dtypes / dims / keepdim / out dtype: each its own plan."""
    for _ in range(2):
        x = randn((6, 9), gen, device)
        xt = randn((9, 6), gen, device).t()  # the same shape, other strides
        xh = x.half()
        for t in (x, xt, xh):
            for dim in (0, 1, -1, -2):
                for keepdim in (False, True):
                    check("reduce_sum", ort.reduce_sum(t, dim, keepdim, backend=backend), t, dim=dim, keepdim=keepdim)
                check("softmax", ort.softmax(t, dim, backend=backend), t, dim=dim)
            # tilelang: one out dtype (each conversion is another C-target compile of seconds; the
            # keys are the same code for every backend)
            for dtype in (torch.float32, torch.float16, torch.bfloat16) if backend != "tilelang" else (t.dtype,):
                check("copy", ort.copy(t, dtype=dtype, backend=backend), t, dtype=dtype)
            check("vector_add", ort.vector_add(t, x.to(t.dtype)[:1], backend=backend), t, x.to(t.dtype)[:1])
    info = plan_cache.cache_info()
    assert info.hits > 0 and info.misses == info.size


def test_backends_do_not_collide(gen):
    if not ort.is_available("tilelang"):
        pytest.skip("needs the tilelang backend beside the cpu one")
    x = randn((5, 33), gen, "cpu")
    for _ in range(2):
        for backend in ("cpu", "tilelang", None):
            check("softmax", ort.softmax(x, -1, backend=backend), x, dim=-1)
    assert plan_cache.cache_info().size == 3  # cpu, tilelang, and the default (None -> cpu) keyed apart


def test_a_taken_plan_is_not_handed_out_twice():
    """While a call uses a plan (taken), another call of the same key misses and makes its own;
    once both are put back, one plan of the key is kept and the other destroyed."""
    closed = []

    class FakePlan:
        workspace_bytes = 0

        def close(self):
            closed.append(self)

    cache = plan_cache.PlanCache(maxsize=4)
    first = plan_cache._Entry(FakePlan(), torch.empty(1), (), False)
    cache.put("k", first)
    assert cache.take("k") is first
    assert cache.take("k") is None  # in use
    second = plan_cache._Entry(FakePlan(), torch.empty(1), (), False)
    cache.put("k", second)
    cache.put("k", first)
    assert len(closed) == 1 and closed[0] in (first.plan, second.plan)
    kept = cache.take("k")
    assert kept is not None and kept.plan is not closed[0]
    assert cache.info()[:3] == (2, 1, 0)


def test_bounded(backend, device, gen):
    maxsize = plan_cache.cache_info().maxsize
    for n in range(1, maxsize + 20):
        x = randn((n,), gen, device)
        check("copy", ort.copy(x, backend=backend), x)
        assert plan_cache.cache_info().size <= maxsize
    assert plan_cache.cache_info().size == maxsize
    x = randn((maxsize + 19,), gen, device)  # the newest layout stays
    ort.copy(x, backend=backend)
    assert plan_cache.cache_info().hits == 1


def test_lru():
    """Eviction destroys the least recently used idle plan; a plan taken out is the caller's."""
    closed = []

    class FakePlan:
        workspace_bytes = 0

        def __init__(self, name):
            self.name = name

        def close(self):
            closed.append(self.name)

    def entry(name):
        return plan_cache._Entry(FakePlan(name), torch.empty(1), (), False)

    cache = plan_cache.PlanCache(maxsize=2)
    cache.put("a", entry("a"))
    cache.put("b", entry("b"))
    e = cache.take("a")  # a is used again
    cache.put("a", e)
    cache.put("c", entry("c"))  # over the bound: b, not a, goes
    assert closed == ["b"] and cache.info().size == 2
    assert cache.take("b") is None
    taken = cache.take("a")  # now the caller's alone: neither eviction nor clear() touches it
    cache.clear()
    assert closed == ["b", "c"] and taken.plan.name == "a"
    assert cache.info() == (0, 0, 0, 2)


def test_holds_no_caller_tensor(backend, device, gen):
    x, out = randn((16, 16), gen, device), torch.empty(16, 16, device=device)
    refs = [weakref.ref(x), weakref.ref(out)]
    ort.softmax(x, -1, out=out, backend=backend)
    ort.softmax(x, -1, out=out, backend=backend)
    del x, out
    gc.collect()
    assert all(r() is None for r in refs), "the plan cache keeps a caller's tensor alive"
    assert plan_cache.cache_info().size == 1


def test_hits_raise_what_misses_raise(backend, device, gen):
    """Errors that depend on more than the key are still raised once the key is cached."""
    x = randn((5, 5), gen, device)
    out, out_kept = torch.empty(5, device=device), torch.empty(5, 1, device=device)
    ort.reduce_sum(x, 1, out=out, backend=backend)  # cached: dim 1, keepdim False
    ort.reduce_sum(x, 1, keepdim=True, out=out_kept, backend=backend)  # cached: dim 1, keepdim True
    with pytest.raises(TypeError, match="dim must be an int, got bool"):  # True == 1, but not a hit
        ort.reduce_sum(x, True, out=out, backend=backend)
    with pytest.raises(TypeError, match="keepdim must be a bool"):
        ort.reduce_sum(x, 1, keepdim=1, out=out_kept, backend=backend)
    # overlap: the layouts of a cached call, but out now shares memory with the input
    a, out = randn((5, 5), gen, device), torch.empty(5, 5, device=device)
    ort.copy(a.t(), out=out, backend=backend)
    ort.copy(a.t(), out=out, backend=backend)
    with pytest.raises(ValueError, match="copy: out overlaps input in memory"):
        ort.copy(out.t(), out=out, backend=backend)
    # in place into an input viewed identically stays allowed: a += b
    b = randn((5, 5), gen, device)
    for _ in range(2):
        a = randn((5, 5), gen, device)
        want = a + b
        assert ort.vector_add(a, b, out=a, backend=backend) is a
        torch.testing.assert_close(a, want)
    c = randn((5, 5), gen, device)
    ort.vector_add(a, c[:, :1].expand(5, 5).t(), out=a, backend=backend)
    with pytest.raises(ValueError, match="vector_add: out overlaps b"):  # the same layouts: a hit
        ort.vector_add(a, a[:, :1].expand(5, 5).t(), out=a, backend=backend)
    with pytest.raises(ValueError, match="backend must be one of"):
        ort.copy(a, backend="fpga")


def test_hits_never_skip_the_argument_checks(backend, device, gen):
    """With out given, eager calls check their inputs only when the layout is new (plan_cache._key):
    whatever a cached layout's neighbours are, a bad input still gets prepare's error, naming it."""
    a, b, out = randn((4, 6), gen, device), randn((4, 6), gen, device), torch.empty(4, 6, device=device)
    for _ in range(2):
        ort.vector_add(a, b, out=out, backend=backend)
        ort.softmax(a, -1, out=out, backend=backend)
    assert plan_cache.cache_info().hits == 2
    bad = {
        "has dtype torch.float64": a.double(),
        "must be a torch.Tensor, got list": a.tolist(),
        "must be a torch.Tensor, got ndarray": a.cpu().numpy(),
        "must be a dense \\(strided\\) tensor": a.cpu().to_sparse(),
    }
    for message, value in bad.items():
        with pytest.raises(TypeError, match=f"vector_add: b {message}"):
            ort.vector_add(a, value, out=out, backend=backend)
        with pytest.raises(TypeError, match=f"softmax: input {message}"):
            ort.softmax(value, -1, out=out, backend=backend)
    with pytest.raises(TypeError, match="softmax: dim must be an int, got list"):  # unhashable: no key
        ort.softmax(a, [1], out=out, backend=backend)
    with pytest.raises(TypeError, match="softmax: dim must be an int, got float"):
        ort.softmax(a, 1.0, out=out, backend=backend)
    assert plan_cache.cache_info().size == 2


def in_threads(n: int, gen: torch.Generator, body) -> None:
    """``body(generator)`` in n threads started together, each with its own seed; a failure is
    re-raised here with its thread's seed."""
    seeds = torch.randint(0, 2**31, (n,), generator=gen).tolist()
    errors = []
    barrier = threading.Barrier(n)

    def work(seed):
        try:
            barrier.wait()
            body(torch.Generator().manual_seed(seed))
        except BaseException as e:
            errors.append((seed, e))

    threads = [threading.Thread(target=work, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_threads(backend, device, gen):
    """Threads calling at once, with shapes shared between them and their own: every result
    checked. Softmax has a workspace on the CPU: two calls sharing one would corrupt rows."""
    shapes = [(3, 5), (64, 64), (1, 257), (8, 1), (0, 4), (33,)]

    def body(g):
        start = int(torch.randint(0, len(shapes), (), generator=g))
        for i in range(60):
            shape = shapes[(start + i) % len(shapes)]
            x, y = randn(shape, g, device), randn(shape, g, device)
            check("softmax", ort.softmax(x, -1, backend=backend), x, dim=-1)
            check("vector_add", ort.vector_add(x, y, backend=backend), x, y)
            check("reduce_sum", ort.reduce_sum(x, -1, backend=backend), x, dim=-1)
            out = torch.empty(shape, device=device, dtype=torch.float16)
            check("copy", ort.copy(x, out=out, backend=backend), x, dtype=torch.float16)

    in_threads(8, gen, body)
    info = plan_cache.cache_info()
    assert info.hits > 0 and info.size <= info.maxsize


def test_threads_one_key_with_workspace(backend, device, gen):
    """Threads on one layout whose softmax has a workspace (the CPU's per-row scratch): rows long
    enough that the kernels overlap in time. A plan shared by two calls mixes their rows."""

    def body(g):
        for _ in range(40):
            x = randn((8, 4096), g, device) * 10
            check("softmax", ort.softmax(x, -1, backend=backend), x, dim=-1)

    in_threads(4, gen, body)
    assert plan_cache.cache_info().hits > 0


def test_cuda_streams_keyed_apart(backend, device, gen):
    """A plan's workspace is used on one stream only: another stream gets its own plan."""
    if device != "cuda":
        pytest.skip("needs a CUDA device")
    x = randn((64, 4096), gen, device)
    check("softmax", ort.softmax(x, -1, backend=backend), x, dim=-1)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = ort.softmax(x, -1, backend=backend)
    torch.cuda.current_stream().wait_stream(side)
    check("softmax", y, x, dim=-1)
    assert plan_cache.cache_info().size == 2


def test_cuda_graph_capture_bypasses_the_cache(backend, device, gen):
    """Captured calls make their own descriptor and workspace (from the graph's pool), as
    before the cache; replays compute on new values."""
    if device != "cuda" or backend != "nvidia":
        pytest.skip("needs a CUDA device and the nvidia backend")
    x, out = randn((64, 4096), gen, device), torch.empty(64, 4096, device=device)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up on a side stream, as torch.cuda.graph asks
        ort.softmax(x, -1, out=out, backend=backend)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    before = plan_cache.cache_info()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        ort.softmax(x, -1, out=out, backend=backend)
    assert plan_cache.cache_info() == before
    x.copy_(randn((64, 4096), gen, device))
    graph.replay()
    torch.cuda.synchronize()
    check("softmax", out, x, dim=-1)


def test_big_workspace_not_kept(gen):
    """A plan whose workspace is over the limit is destroyed after its call, not kept."""
    row_len = plan_cache.MAX_WORKSPACE_BYTES // 4 + 1  # softmax's CPU scratch: >= one f32 row per thread
    x = randn((2, row_len), gen, "cpu")
    check("softmax", ort.softmax(x, -1, backend="cpu"), x, dim=-1)
    assert plan_cache.cache_info().size == 0


def test_a_negated_view_is_refused_after_a_hit_of_its_layout(gen):
    """torch's lazy negation bit (z.conj().imag) leaves the memory un-negated: the runtime must
    refuse such a tensor by name, as input or out, also where a plain tensor of the same layout
    has a plan (a fuzzer found every op reading the raw memory: wrong signs, silently)."""
    z = torch.complex(torch.randn(5, generator=gen), torch.randn(5, generator=gen))
    negated, plain = z.conj().imag, torch.randn(5, generator=gen)
    assert negated.is_neg() and negated.stride() == (2,)
    strided = torch.randn(10, generator=gen)[::2]  # the same layout, no bit: its plan is made first
    check("copy", ort.copy(strided), strided)
    with pytest.raises(ValueError, match="input has torch's negation bit set"):
        ort.copy(negated)
    with pytest.raises(ValueError, match="out has torch's negation bit set"):
        ort.copy(plain, out=z.clone().conj().imag)
    check("reduce_sum", ort.reduce_sum(negated.resolve_neg(), 0), negated.resolve_neg(), dim=0)


def test_interleaved_views_that_share_no_element_are_not_overlap(gen):
    """out and an input in one storage, interleaved but sharing no element (a[::2] and a[1::2], a
    matrix's two column halves), run as torch runs them, on a miss and on a hit; views that do share
    elements are still refused (the check once compared byte ranges only)."""
    for _ in range(2):  # a miss, then a hit of the same layouts
        a = torch.randn(11, generator=gen)
        want = a[1::2] + a[1::2]
        ort.vector_add(a[1::2], a[1::2], out=a[:-1:2])
        assert torch.equal(a[:-1:2], want)
        m = torch.randn(4, 6, generator=gen)
        check("softmax", ort.softmax(m[:, :3], 1, out=m[:, 3:]), m[:, :3], dim=1)
        with pytest.raises(ValueError, match="out overlaps a in memory"):
            ort.vector_add(a[1:6], a[1:6], out=a[:5])
