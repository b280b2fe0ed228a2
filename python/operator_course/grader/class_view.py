"""The class view (issue 30): the class's kernels side by side for students, and the class's
results for the instructor, rebuilt after every grading run from what the grader wrote.

    python -m operator_course.grader.class_view OUT [--submissions S --labs L --roster R] [--course course.toml]
    python -m operator_course.grader.class_view --reference OUT --labs L [-- GRADER ARGS...]

The step (grade.py calls ``after_grading`` last; hosting's ``grade`` and ``late`` call ``build``
again after the late rule); its data in class_data.py, its pages in leaderboard.py and dashboard.py.

What it writes, beside the gradebook:
  OUT/timings.json            every performance check's timing from the trusted harness, per shape
                              (written by the grading run itself: class_data.record_timings)
  OUT/similarity.json         similarity.flag_pairs over SUBMISSIONS (when similarity.py is there)
  OUT/leaderboard/index.html  public: per lab, each kernel as % of the copy ceiling (matmul: of the
                              tensor-core peak), the geometric mean over the harness's shapes, beside
                              torch and the course's reference kernel; a roofline chart (PNG beside it)
                              with every student's point. Pseudonyms only; flagged entries left out.
  OUT/dashboard/index.html    instructor only: pass rates and points per lab and check, causes of
                              failure grouped by the judge's diagnosis, late, missing and pending work,
                              flags, similar pairs side by side, the leaderboard with real names and
                              flagged entries marked, links to each student's feedback and logs
  OUT/feedback/<student>.md   gains a closing section naming the student's own pseudonym

Where the timings come from: only the grader's timed job (runner.py's ``performance`` kind calls
verified_timing.measure through lab.checks.measure, in the sandbox, on inputs the grader draws);
its result.json holds {"ratio", "summary"} or {"error", "flag"}. The summary is the harness's own
line (Measurement.summary: each shape's rate and torch's, the measured ceiling), which
class_data.timing_from_result reads back into numbers where score.verdict judges the check; a result that
carries the shapes as data ("shapes": [...]) is taken as is. Nothing a student's cell printed is
read. A reason in the gradebook is never parsed for numbers (a compile error quotes student text).

Pseudonyms: adjective-animal-NN from an HMAC of the student's name under the course's secret key
(OUT/.pseudonym-key, made on first use, root-only; or $OPRT_PSEUDONYM_KEY), so the same student
keeps the same name across runs and nobody without the key can tell who is who. A student learns
their own from their feedback file (``course return`` hands it out).

Flagged for the instructor (left off the public board, marked on the dashboard): a timing the
harness refused as impossible or caught computing a wrong result, a shape timed faster than the
ceiling measured in the same run, a FLAGGED reason or a flags note in the gradebook, and both
students of a pair similarity.flag_pairs reports for that lab.

The course's reference kernel: the instructor's own solutions graded like a submission into
OUT/reference/ (``--reference`` does it: the lab notebooks as student "reference"); its timings
are the reference line of each lab. Compared by % of the ceiling (each run measures its own), so a
reference graded in another run, on other shapes of the same seed rule, still compares.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import dashboard, leaderboard
from .class_data import REFERENCE, SIMILARITY, load, record_timings, tell_pseudonyms
from .gradebook import Row


def build(out: Path, submissions: Path | None = None, labs: Path | None = None, roster: list[str] | None = None,
          course=None) -> dict[str, Path]:
    """Writes the leaderboard, the dashboard and the feedback's pseudonym lines from OUT (and the
    similarity list, when SUBMISSIONS and LABS are given); returns what it wrote."""
    import matplotlib

    matplotlib.use("Agg")  # files only, whatever display the grader runs under
    out = Path(out)
    data = load(out, submissions, labs, roster, course)
    written = {"leaderboard": leaderboard.write(data), "dashboard": dashboard.write(data)}
    tell_pseudonyms(out, {s: data.names[s] for s in data.students if s in data.names})
    if (out / SIMILARITY).is_file():
        written["similarity"] = out / SIMILARITY
    return written


def after_grading(args, merged: list[Row], new: list[Row], graded_at: str) -> None:
    """grade.py's last step: timings.json, then the class view. Never fails the grading run: what
    went wrong is printed, and ``python -m operator_course.grader.class_view OUT`` rebuilds it."""
    try:
        record_timings(args.out, merged, new, graded_at)
        from .submissions import read_roster

        roster = read_roster(args.roster) if args.roster else None
        written = build(args.out, args.submissions, args.labs, roster)
        print(f"class view: {written['leaderboard']}, {written['dashboard']}", file=sys.stderr)
    except Exception as e:  # noqa: BLE001
        import traceback

        traceback.print_exc()
        print(f"grade: WARNING: the class view was not rebuilt ({type(e).__name__}: {e}); the grades are written. "
              f"Rebuild it with python -m operator_course.grader.class_view {args.out}", file=sys.stderr)


def grade_reference(out: Path, labs: Path, grader_args: list[str]) -> int:
    """The course's reference kernels: the instructor's notebooks graded as student "reference" into
    OUT/reference/ (the same grader, sandbox and harness as the class's; its own process)."""
    with tempfile.TemporaryDirectory(prefix="oprt-reference-") as tmp:
        folder = Path(tmp) / "submissions" / REFERENCE
        folder.mkdir(parents=True)
        for path in sorted(Path(labs).glob("*.ipynb")):
            shutil.copyfile(path, folder / path.name)
        return subprocess.run([sys.executable, "-m", "operator_course.grader.grade", str(folder.parent), "--labs",
                               str(labs), "-o", str(Path(out) / REFERENCE), *grader_args]).returncode


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    grader_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="python -m operator_course.grader.class_view", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the grader's OUT folder (gradebook.csv, ...)")
    parser.add_argument("--submissions", type=Path, help="the class's submissions (for the similarity check)")
    parser.add_argument("--labs", type=Path, help="the instructor notebooks (similarity check, --reference)")
    parser.add_argument("--roster", type=Path, help="one student per line: who is missing")
    parser.add_argument("--course", type=Path, help="course.toml: its submissions, labs, roster and due dates")
    parser.add_argument("--reference", action="store_true",
                        help="grade the instructor notebooks (--labs) into OUT/reference first: the reference "
                             "kernels' timings (arguments after -- go to the grader)")
    args = parser.parse_args(argv)
    course = None
    if args.course:
        from operator_course.hosting import config

        course = config.load(args.course)
        args.submissions = args.submissions or course.submissions
        args.labs = args.labs or course.labs
        args.roster = args.roster or (course.roster if course.roster.is_file() else None)
    if args.reference:
        if not args.labs:
            parser.error("--reference needs --labs (or --course)")
        code = grade_reference(args.out, args.labs, grader_args)
        if code:
            return code
    if not (args.out / "gradebook.csv").is_file():
        parser.error(f"{args.out} holds no gradebook.csv")
    from .submissions import read_roster

    roster = read_roster(args.roster) if args.roster else None
    written = build(args.out, args.submissions, args.labs, roster, course)
    for what, path in written.items():
        print(f"{what}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
