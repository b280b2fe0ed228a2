"""The C contract called directly: every status code the four functions can return.

These go around the Python checks on purpose, to prove the C side refuses bad requests
by itself (a C caller has no Python in front of it).
"""

from __future__ import annotations

import ctypes

import pytest
import torch

from operator_runtime._internal import bind_op
from operator_runtime._internal.native import STATUS, TensorView
from operator_runtime.ops import SIGNATURES
from operator_runtime_testing.operators import OPERATORS

# the attributes of a valid create, per op (each operator's record: operators/<op>.py)
DEFAULT_ATTRS = {op: r.contract_attrs for op, r in OPERATORS.items()}


def view(shape, strides=None, dtype=0):
    v = TensorView()
    v.dtype, v.rank = dtype, len(shape)
    strides = strides or torch.empty(shape).stride() if shape else ()
    for d, (size, stride) in enumerate(zip(shape, strides)):
        v.shape[d], v.strides[d] = size, stride
    return v


def out_shape(op, shape):
    """The op's output shape for a valid call around ``shape`` (its first input's)."""
    return OPERATORS[op].contract_shapes(shape)[0]


def in_shapes(op, shape) -> list[tuple]:
    """The op's input shapes for a valid call around ``shape`` (its first input's)."""
    return OPERATORS[op].contract_shapes(shape)[1]


class Contract:
    """One op in one backend library, driven through raw ctypes."""

    def __init__(self, backend, op):
        self.op, self.b = op, bind_op(backend, SIGNATURES[op])
        self.n_in = len(SIGNATURES[op].inputs)

    def create(self, out, *inputs, attrs=None):
        handle = ctypes.c_void_p()
        code = self.b.create(ctypes.byref(handle), ctypes.byref(out), *[ctypes.byref(v) for v in inputs],
                             *(DEFAULT_ATTRS[self.op] if attrs is None else attrs))
        return code, handle

    def create_ok(self, shape=(4, 6)):
        code, handle = self.create(view(out_shape(self.op, shape)), *[view(s) for s in in_shapes(self.op, shape)])
        assert code == STATUS["SUCCESS"], self.error()
        return handle

    def execute(self, handle, out_ptr, in_ptrs, workspace=None, size=0):
        return self.b.execute(handle, workspace, size, out_ptr, *in_ptrs, None)

    def error(self) -> str:
        return self.b.lib.oprt_last_error().decode()


@pytest.fixture(autouse=True)
def c_library_backends_only(backend):
    if backend == "tilelang":
        pytest.skip("the tilelang backend has no C library: TileLang compiles its kernels from Python")


@pytest.fixture(params=list(SIGNATURES))
def contract(request, backend, device):
    return Contract(backend, request.param)


def test_lifecycle_and_wrong_use(contract):
    h = contract.create_ok()
    size = ctypes.c_size_t(123)
    assert contract.b.workspace_size(h, ctypes.byref(size)) == STATUS["SUCCESS"]
    assert contract.b.destroy(h) == STATUS["SUCCESS"]
    assert contract.b.destroy(h) == STATUS["BAD_DESCRIPTOR"], "destroying twice must be refused"
    assert "not a live" in contract.error()
    assert contract.b.workspace_size(h, ctypes.byref(size)) == STATUS["BAD_DESCRIPTOR"], "use after destroy"
    assert contract.execute(h, 1, [1] * contract.n_in) == STATUS["BAD_DESCRIPTOR"], "execute after destroy"
    assert contract.b.destroy(None) == STATUS["NULL_POINTER"]


def test_descriptor_of_another_operator_is_refused(contract, backend):
    other = next(op for op in SIGNATURES if op != contract.op)
    foreign = Contract(backend, other).create_ok()
    try:
        assert contract.execute(foreign, 1, [1] * contract.n_in) == STATUS["BAD_DESCRIPTOR"]
        assert f"is a {other} descriptor, not a {contract.op}" in contract.error()
    finally:
        Contract(backend, other).b.destroy(foreign)


def test_null_pointers(contract):
    shape = (4, 6)
    inputs = [view(s) for s in in_shapes(contract.op, shape)]
    handle = ctypes.c_void_p()
    assert contract.b.create(None, ctypes.byref(view(out_shape(contract.op, shape))),
                             *[ctypes.byref(v) for v in inputs], *DEFAULT_ATTRS[contract.op]) == STATUS["NULL_POINTER"]
    assert contract.b.create(ctypes.byref(handle), None, *[ctypes.byref(v) for v in inputs],
                             *DEFAULT_ATTRS[contract.op]) == STATUS["NULL_POINTER"]
    assert "out is NULL" in contract.error()
    h = contract.create_ok(shape)
    try:
        assert contract.b.workspace_size(h, None) == STATUS["NULL_POINTER"]
        size = ctypes.c_size_t()
        contract.b.workspace_size(h, ctypes.byref(size))
        ws = torch.empty(size.value, dtype=torch.uint8)
        assert contract.execute(h, None, [1] * contract.n_in, ws.data_ptr(), size.value) == STATUS["NULL_POINTER"]
        assert "out is NULL" in contract.error()
        assert contract.execute(h, 1, [None] * contract.n_in, ws.data_ptr(), size.value) == STATUS["NULL_POINTER"]
    finally:
        contract.b.destroy(h)


@pytest.mark.parametrize("problem,status", [
    ("dtype", "BAD_DTYPE"), ("rank", "BAD_SHAPE"), ("negative-size", "BAD_SHAPE"),
    ("negative-stride", "BAD_STRIDES"), ("overlapping-out", "BAD_STRIDES"), ("shape-mismatch", "BAD_SHAPE"),
    ("offset-overflow", "BAD_STRIDES"),
])
def test_create_refuses(contract, problem, status):
    shape = (4, 6)
    out, ins = view(out_shape(contract.op, shape)), [view(s) for s in in_shapes(contract.op, shape)]
    if problem == "dtype":
        ins[0].dtype = 7
    elif problem == "rank":
        ins[0].rank = 9
    elif problem == "negative-size":
        ins[0].shape[0] = -1
    elif problem == "negative-stride":
        ins[0].strides[1] = -1
    elif problem == "overlapping-out":
        out.strides[0] = 0
    elif problem == "shape-mismatch":
        out.shape[0] = 5
    elif problem == "offset-overflow":
        ins[0].strides[0] = 2**62
    code, handle = contract.create(out, *ins)
    assert code == STATUS[status], (problem, code, contract.error())
    assert handle.value is None, "a failed create must not hand out a descriptor"
    assert contract.error(), "a failed call must say why"


@pytest.mark.parametrize("op,attrs,message", [(op, attrs, message) for op, r in OPERATORS.items()
                                              for attrs, message in r.contract_bad_attrs])
def test_bad_attributes(backend, device, op, attrs, message):
    c = Contract(backend, op)
    code, _ = c.create(view(out_shape(op, (4, 6))), view((4, 6)), attrs=attrs)
    assert code == STATUS["BAD_ATTRIBUTE"] and message in c.error()


def test_mismatched_dtypes(backend, device):
    c = Contract(backend, "vector_add")
    code, _ = c.create(view((4,)), view((4,)), view((4,), dtype=1))
    assert code == STATUS["BAD_DTYPE"] and "a is f32 but b is f16" in c.error()


def test_workspace_too_small(backend, device):
    """softmax on the CPU keeps one f32 row per thread in its workspace."""
    c = Contract(backend, "softmax")
    x = torch.randn(3, 1000, device=device)
    y = torch.empty_like(x)
    code, h = c.create(view(tuple(y.shape)), view(tuple(x.shape)))
    assert code == 0, c.error()
    try:
        size = ctypes.c_size_t()
        assert c.b.workspace_size(h, ctypes.byref(size)) == 0
        if size.value == 0:
            pytest.skip(f"the {backend} softmax needs no workspace for this shape")
        ws = torch.empty(size.value, dtype=torch.uint8, device=device)
        assert c.execute(h, y.data_ptr(), [x.data_ptr()], ws.data_ptr(), size.value - 1) == STATUS["WORKSPACE_TOO_SMALL"]
        assert c.execute(h, y.data_ptr(), [x.data_ptr()], None, size.value) == STATUS["NULL_POINTER"]
        assert c.execute(h, y.data_ptr(), [x.data_ptr()], ws.data_ptr(), size.value) == 0, c.error()
        if device == "cuda":
            torch.cuda.synchronize()
        torch.testing.assert_close(y, torch.softmax(x, -1))
    finally:
        c.b.destroy(h)


def test_descriptor_from_another_backend_is_refused(backend, device):
    if backend == "cpu":
        pytest.skip("needs a second backend library: run with --backend nvidia on a GPU machine")
    cpu, this = Contract("cpu", "copy"), Contract(backend, "copy")
    h = cpu.create_ok()
    try:
        assert this.execute(h, 1, [1]) == STATUS["BAD_DESCRIPTOR"]
        assert f"of the {backend} backend" in this.error()
    finally:
        cpu.b.destroy(h)


def test_empty_tensors_need_no_pointers(contract):
    """An empty tensor may have a NULL data pointer (torch gives it one)."""
    shape = (0, 6)
    code, h = contract.create(view(out_shape(contract.op, shape)), *[view(s) for s in in_shapes(contract.op, shape)])
    assert code == 0, contract.error()
    try:
        assert contract.execute(h, None, [None] * contract.n_in) == 0, contract.error()
    finally:
        contract.b.destroy(h)


@pytest.mark.parametrize("out,a,b,message", [
    ((4, 5), (4, 6), (5, 5), "do not multiply: a's last dim (K=6) must equal b's second-to-last (5)"),
    ((6, 5), (6,), (6, 5), "a [6] has rank 1"),
    ((2, 4, 5), (2, 4, 6), (3, 6, 5), "have batches 2 and 3 that do not broadcast"),
    ((4, 5), (2, 4, 6), (2, 6, 5), "out [4, 5] must have the shape [2, 4, 5]"),
])
def test_matmul_shapes_are_checked(backend, device, out, a, b, message):
    c = Contract(backend, "matmul")
    code, handle = c.create(view(out), view(a), view(b))
    assert code == STATUS["BAD_SHAPE"] and message in c.error(), c.error()
    assert handle.value is None


def test_matmul_mixed_dtypes(backend, device):
    c = Contract(backend, "matmul")
    code, _ = c.create(view((4, 5)), view((4, 6)), view((6, 5), dtype=2))
    assert code == STATUS["BAD_DTYPE"] and "a is f32 but b is bf16" in c.error()


def test_matmul_k_zero_writes_zeros_without_reading(backend, device):
    """K = 0: every output is an empty sum; a and b may have no storage (NULL pointers)."""
    c = Contract(backend, "matmul")
    out = torch.randn(3, 4, device=device)
    code, h = c.create(view((3, 4)), view((3, 0)), view((0, 4)))
    assert code == 0, c.error()
    try:
        size = ctypes.c_size_t()
        assert c.b.workspace_size(h, ctypes.byref(size)) == 0 and size.value == 0
        assert c.execute(h, out.data_ptr(), [None, None]) == 0, c.error()
        if device == "cuda":
            torch.cuda.synchronize()
        assert torch.equal(out, torch.zeros_like(out))
    finally:
        c.b.destroy(h)


def test_matmul_workspace_is_checked(backend, device):
    """The CPU matmul packs its tiles in a per-thread workspace; execute refuses one too small."""
    c = Contract(backend, "matmul")
    a, b = torch.randn(70, 300, device=device), torch.randn(300, 90, device=device)
    out = torch.empty(70, 90, device=device)
    code, h = c.create(view((70, 90)), view((70, 300)), view((300, 90)))
    assert code == 0, c.error()
    try:
        size = ctypes.c_size_t()
        assert c.b.workspace_size(h, ctypes.byref(size)) == 0
        ws = torch.empty(max(size.value, 1), dtype=torch.uint8, device=device)
        if size.value:
            assert c.execute(h, out.data_ptr(), [a.data_ptr(), b.data_ptr()], ws.data_ptr(), size.value - 1) == \
                STATUS["WORKSPACE_TOO_SMALL"]
        assert c.execute(h, out.data_ptr(), [a.data_ptr(), b.data_ptr()], ws.data_ptr(), size.value) == 0, c.error()
        if device == "cuda":
            torch.cuda.synchronize()
        torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-4)
    finally:
        c.b.destroy(h)


def test_matmul_packing_workspace_is_checked(backend, device):
    """The nvidia matmul copies 16-bit operands whose rows are not 16 bytes (K = 1995, N = 90) into its
    workspace before the tensor-core kernels read them (ops/matmul/nvidia/matmul_pack.cuh): it asks for
    that workspace, refuses one too small, and with it gives a @ b."""
    if backend != "nvidia" or device != "cuda":
        pytest.skip("the packing workspace is the nvidia backend's, on a GPU with tensor cores")
    if torch.cuda.get_device_capability()[0] < 8:
        pytest.skip("packing is for the tensor-core kernels (sm_80 and newer)")
    c = Contract(backend, "matmul")
    a = torch.randn(70, 1995, device=device).to(torch.bfloat16)
    b = torch.randn(1995, 90, device=device).to(torch.bfloat16)
    out = torch.empty(70, 90, device=device, dtype=torch.bfloat16)
    code, h = c.create(view((70, 90), dtype=2), view((70, 1995), dtype=2), view((1995, 90), dtype=2))
    assert code == 0, c.error()
    try:
        size = ctypes.c_size_t()
        assert c.b.workspace_size(h, ctypes.byref(size)) == 0
        assert size.value >= (70 * 2000 + 1995 * 96) * 2, size.value  # both copies, rows rounded up to 8
        ws = torch.empty(size.value, dtype=torch.uint8, device=device)
        assert c.execute(h, out.data_ptr(), [a.data_ptr(), b.data_ptr()], ws.data_ptr(), size.value - 1) == \
            STATUS["WORKSPACE_TOO_SMALL"]
        assert c.execute(h, out.data_ptr(), [a.data_ptr(), b.data_ptr()], ws.data_ptr(), size.value) == 0, c.error()
        torch.cuda.synchronize()
        torch.testing.assert_close(out.float(), a.float() @ b.float(), rtol=1.6e-2, atol=0.5)
    finally:
        c.b.destroy(h)
