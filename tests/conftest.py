"""Test options: --backend picks the backends under test, --seed fixes the random inputs."""

from __future__ import annotations

import random
import zlib

import pytest
import torch

import operator_runtime as ort
from operator_runtime._internal.native import find_library

# The device each backend's tests put tensors on (tilelang: its GPU kernels where there
# is a GPU, its CPU variants otherwise).
DEVICE = {"cpu": "cpu", "nvidia": "cuda", "tilelang": "cuda" if torch.cuda.is_available() else "cpu", "metax": "cuda"}
OP_SUITE_GROUPS = 4  # pytest-xdist groups per operator-suite module (pytest_collection_modifyitems)


def pytest_addoption(parser):
    parser.addoption("--backend", default="available", choices=ort.BACKENDS + ("all", "available"),
                     help="backend(s) to test: one name, 'all', or 'available' (default: what runs here)")
    parser.addoption("--seed", type=int, default=None, help="seed for random inputs (default: fresh each run)")


def _seed(config) -> int:
    if not hasattr(config, "_oprt_seed"):
        given = config.getoption("--seed")
        if hasattr(config, "workerinput"):  # a pytest-xdist worker: the seed the header printed
            given = config.workerinput["oprt_seed"]
        config._oprt_seed = given if given is not None else random.randrange(2**31)
    return config._oprt_seed


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist (make test runs two workers): every worker draws from the one seed."""
    node.workerinput["oprt_seed"] = _seed(node.config)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the marks
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's --dist loadgroup (make test), a module's tests stay on one worker (its
    module fixtures, e.g. a graded class, run once), and every grader and hosting test shares one
    worker: their sandboxes take uids from one fixed range, their cgroups split the machine's CPUs,
    and test_class_holds measures CPU time, none of which two concurrent graders would leave alone.
    An operator suite (tests/runtime/ops/) has no module fixture: its tests go to OP_SUITE_GROUPS groups by
    a hash of their id (crc32: the same on every worker), so one op's hundreds of cases (and on a fresh GPU
    machine, its TileLang compiles) do not all wait for one worker."""
    for item in items:
        module = item.nodeid.split("::")[0]
        if module.startswith(("tests/grader/", "tests/hosting/")):
            group = "sandbox"
        elif module.startswith("tests/runtime/ops/"):
            group = f"{module}#{zlib.crc32(item.nodeid.encode()) % OP_SUITE_GROUPS}"
        else:
            group = module
        item.add_marker(pytest.mark.xdist_group(group))


def pytest_report_header(config):
    return [f"operator_runtime: backends available here {ort.available_backends()}, "
            f"random inputs seeded with --seed {_seed(config)}"]


def selected_backends(config) -> list[str]:
    choice = config.getoption("--backend")
    if choice == "available":
        return ort.available_backends() or ["cpu"]
    return list(ort.BACKENDS) if choice == "all" else [choice]


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", selected_backends(metafunc.config), scope="session")


def unavailable_reason(backend: str) -> str | None:
    if backend == "cpu":
        return None  # always built: a missing CPU library is a failure, not a skip
    if backend == "nvidia":
        if find_library("nvidia") is None:
            return "liboprt_nvidia.so was not built (no nvcc at build time)"
        if not torch.cuda.is_available():
            return "the nvidia backend needs a CUDA GPU; none is visible"
        return None
    if backend == "metax":
        return "the metax backend is a stub (needs MetaX GPUs and the MACA toolchain)"
    if backend == "tilelang" and not ort.is_available("tilelang"):
        return "the tilelang backend needs the tilelang package (requirements.txt)"
    return None


@pytest.fixture
def device(backend) -> str:
    reason = unavailable_reason(backend)
    if reason:
        pytest.skip(reason)
    return DEVICE[backend]


@pytest.fixture
def gen(request) -> torch.Generator:
    """A generator seeded from the run's seed and the test's name: fresh inputs per run,
    reproducible with --seed."""
    g = torch.Generator()
    g.manual_seed((_seed(request.config) * 1_000_003 + zlib.crc32(request.node.nodeid.encode())) % 2**63)
    return g
