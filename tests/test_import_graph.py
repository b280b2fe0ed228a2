"""The import graph of python/ has no circle: the public API stands above the private layer, which
gets what it needs from the signature it is handed, and no module needs a function-level import
to dodge a loop. Every import counts, at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "python"


def modules() -> dict[str, tuple[Path, bool]]:
    """dotted name -> (file, is a package's __init__)"""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def imports(name: str, path: Path, package: bool, known: dict) -> set[str]:
    """The modules of python/ that ``name`` imports: ``from . import x`` names the submodule x
    when there is one, else the package itself."""
    here = name.split(".") if package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            subs = {f"{base}.{a.name}" for a in node.names} & known.keys()
            found |= subs if len(subs) == len(node.names) else subs | ({base} & known.keys())
    return found - {name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on.add(root)  # noqa: E702
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)  # noqa: E702
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop(); on.discard(w); component.append(w)  # noqa: E702
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, package, known) for name, (path, package) in known.items()}


def test_python_has_no_import_circle():
    found = circles(graph())
    assert not found, "import circles in python/:\n  " + "\n  ".join(" <-> ".join(c) for c in found)


def test_a_circle_is_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_private_layer_imports_nothing_public_but_the_errors():
    """operator_runtime/_internal/ stands below the API: of the public modules it needs only the
    exception types (a leaf) it raises."""
    g = graph()
    private = [m for m in g if m.startswith("operator_runtime._internal")]
    public = [m for m in g if m.startswith("operator_runtime") and m not in private and m != "operator_runtime.errors"]
    upward = sorted(f"{m} imports {t}" for m in private for t in g[m] if t in public)
    assert not upward, upward


def test_the_course_uses_the_runtime_through_its_public_api():
    g = graph()
    private = sorted(f"{m} imports {t}" for m, targets in g.items() if m.startswith("operator_course")
                     for t in targets if t.startswith("operator_runtime._internal"))
    assert not private, private


# The seed's test helpers, and nothing else: the course (student API, grader, emulator, hosting,
# book) is operator_course, beside it.
TEST_HELPERS = {"assertions", "operators", "performance", "tensors", "timing", "tolerances", "verified_timing"}


def test_operator_runtime_testing_holds_only_test_helpers():
    package = ROOT / "operator_runtime_testing"
    found = {p.stem for p in package.iterdir() if p.suffix == ".py" and p.stem != "__init__"} | \
        {p.name for p in package.iterdir() if p.is_dir() and p.name != "__pycache__"}
    extra = sorted(found - TEST_HELPERS)
    assert found == TEST_HELPERS, f"operator_runtime_testing holds {extra} beyond the test helpers"
