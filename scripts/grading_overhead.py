"""What the sandbox costs: grade a class of N solved lab-1 notebooks twice, sandboxed and with
--unsafe-no-sandbox, in one run, and print both wall times.

    .venv/bin/python scripts/grading_overhead.py [--students 20] [--jobs 2] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from labs.submissions import parse, student_notebook  # noqa: E402

import nbformat  # noqa: E402

from operator_course.grader.notebook import read  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    instructor = ROOT / "labs" / "01_copy.ipynb"
    nb = student_notebook(read(instructor), parse(ROOT / "tests" / "labs" / "control" / "solved.py"))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.students):
            (Path(tmp) / "class" / f"s{i:02d}").mkdir(parents=True)
            nbformat.write(nb, str(Path(tmp) / "class" / f"s{i:02d}" / instructor.name))
        for mode, extra in (("sandbox", []), ("no sandbox", ["--unsafe-no-sandbox"])):
            start = time.monotonic()
            subprocess.run([sys.executable, "-m", "operator_course.grader.grade", "class", "--labs",
                            str(ROOT / "labs"), "--lab", "01_copy", "-o", f"out-{len(results)}", "--jobs",
                            str(args.jobs), *extra], cwd=tmp, check=True, capture_output=True)
            results[mode] = time.monotonic() - start
            print(f"{mode:>10}: {results[mode]:6.1f} s for {args.students} notebooks, "
                  f"{results[mode] / args.students:.2f} s per notebook (--jobs {args.jobs})", flush=True)
    print(f"sandbox overhead: {results['sandbox'] / results['no sandbox'] - 1:+.1%}")
    if args.json:
        args.json.write_text(json.dumps({"students": args.students, "jobs": args.jobs, "seconds": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
