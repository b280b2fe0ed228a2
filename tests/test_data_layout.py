"""data/ holds what the build and the book read, and the record of measurements as one dated log:
every file under data/results/ is cited by data/results-log.md and named by its date, and no
other folder of data/ keeps loose notes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READ_BY_THE_BOOK = ("data/bench/h200.json", "data/bench/steps/", "data/bench/matmul/h200-wgmma.json",
                    "data/bench/estimate/", "data/bench/sweep/", "data/ncu/h200-goal-kernels.log")


def tracked(prefix: str) -> list[str]:
    return subprocess.run(["git", "ls-files", prefix], capture_output=True, text=True, cwd=ROOT,
                          check=True).stdout.split()


def test_every_record_is_dated_and_cited_by_the_log():
    log = (ROOT / "data" / "results-log.md").read_text()
    records = tracked("data/results/")
    assert records, "data/results/ is empty: the log cites nothing"
    undated = [f for f in records if not re.match(r"data/results/\d{4}-\d\d-\d\d-", f)]
    uncited = [f for f in records if f not in log]
    assert not undated, f"name these by date (YYYY-MM-DD-...): {undated}"
    assert not uncited, f"data/results-log.md cites none of these: say what they are in a dated entry: {uncited}"


def test_the_log_is_dated_newest_first():
    dates = re.findall(r"^## (\d{4}-\d\d-\d\d):", (ROOT / "data" / "results-log.md").read_text(), flags=re.M)
    assert dates and dates == sorted(dates, reverse=True), dates


def test_nothing_else_lies_loose_in_data():
    loose = [f for f in tracked("data/") if f != "data/results-log.md" and not f.startswith("data/results/")
             and not f.startswith(READ_BY_THE_BOOK)]
    assert not loose, f"data/ holds what the book and build read and the results log: move these into the log: {loose}"
