"""The roofline command and the chapter tables, on the committed H200 results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from operator_course.book.chapter import traffic_table
from operator_runtime_testing.performance import read_results

ROOT = Path(__file__).resolve().parents[2]
RESULTS = sorted((ROOT / "data" / "bench").glob("*.json"))


def roofline(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "operator_course.book.roofline", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.name)
def test_results_file_has_what_the_book_reads(path):
    doc = read_results(path)
    assert doc["device"]["name"] and doc["versions"]["torch"] and doc["copy_ceiling_gbps"] > 0
    for row in doc["rows"]:
        for key in ("op", "backend", "shape", "dtype", "latency_ms", "torch_ms", "bytes", "flops", "gbps"):
            assert key in row, (key, row)
        assert row["latency_ms"] > 0 and row["torch_ms"] > 0


@pytest.mark.parametrize("op", ["softmax", None])
def test_roofline_command_draws_an_svg(tmp_path, op):
    out = tmp_path / "chart.svg"
    result = roofline(RESULTS[0], "-o", out, *(["--op", op] if op else []))
    assert result.returncode == 0, result.stderr
    svg = out.read_text()
    assert svg.startswith("<?xml") and "<svg" in svg
    assert "bandwidth" in svg and "intensity roofline" in svg


def test_roofline_command_refuses_an_op_without_rows(tmp_path):
    result = roofline(RESULTS[0], "-o", tmp_path / "x.svg", "--op", "no_such_op")
    assert result.returncode == 2 and "no benchmark rows for no_such_op" in result.stderr


def test_roofline_reads_any_results_file(tmp_path):
    """Instructors chart their own GPUs: a minimal file from another device works too."""
    row = {"op": "copy", "backend": "nvidia", "shape": [1 << 26], "dtype": "f32", "attrs": {}, "latency_ms": 0.2,
           "bytes": 1 << 29, "flops": 0, "torch_ms": 0.25, "torch_gbps": 2147.0, "gbps": 2684.0, "gflops": 0.0}
    doc = {"created": "2026-12-02T00:00:00+00:00", "device": {"name": "Some GPU"}, "versions": {"torch": "x"},
           "copy_ceiling_gbps": 2800.0, "rows": [row]}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(doc))
    assert roofline(path, "-o", tmp_path / "mine.png").returncode == 0
    assert (tmp_path / "mine.png").stat().st_size > 1000


def test_traffic_table_lists_every_benchmark_shape():
    doc = read_results(RESULTS[0])
    table = traffic_table(doc, "softmax").splitlines()
    shapes = [r for r in doc["rows"] if r["op"] == "softmax" and r["bytes"] >= 1 << 20]
    assert len(table) == 2 + len(shapes)
    assert all(line.count("|") == 10 for line in table)
    assert {line.split("|")[1].strip() for line in table[2:]} == {r["backend"] for r in shapes}
