"""The course's commands (python -m operator_course.hosting COMMAND --config course.toml):

  serve     make the roster's accounts, release the handout, start the hub (root)
  users     only make the accounts (passwords of new ones: STATE/passwords.txt, root-only)
  collect   every student's lab notebooks into SUBMISSIONS/<student>/ (+ collected.json)
  grade     the grader on SUBMISSIONS with the roster (missing = 0), then the late rule and the
            class view (GRADES/leaderboard/, GRADES/dashboard/: grader/class_view.py);
            arguments after -- go to the grader (e.g. -- --lab 01_copy --jobs 4)
  late      apply the late rule again to GRADES (after grading by hand or on a GPU machine)
  return    each student's feedback into ~/feedback/grades.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from . import accounts, config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m operator_course.hosting", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["serve", "users", "collect", "grade", "late", "return"])
    parser.add_argument("--config", type=Path, default=Path("course.toml"), help="the course file (course.toml)")
    argv = list(sys.argv[1:] if argv is None else argv)
    grader_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.config = args.config.resolve()  # from the caller's folder, before serve's chdir into the hub state
    course = config.load(args.config)
    if args.command == "serve":
        from .serve import serve

        serve(course, args.config)  # does not return: becomes the hub
    elif args.command == "users":
        made = accounts.ensure(accounts.students(course.roster), course.passwords)
        print(f"{len(made)} new accounts; passwords in {course.passwords}")
    elif args.command == "collect":
        from .collect import collect

        for name, record in collect(course).items():
            saved = ", ".join(f"{k} (saved {v['saved']})" for k, v in record["notebooks"].items()) or "nothing"
            skipped = "".join(f"; skipped {k}: {v}" for k, v in record["skipped"].items())
            print(f"{name}: {saved}{skipped}")
    elif args.command == "grade":
        grade = [sys.executable, "-m", "operator_course.grader.grade", str(course.submissions),
                 "--labs", str(course.labs), "-o", str(course.grades), "--roster", str(course.roster),
                 "--cpu-verdicts", course.cpu_verdicts, *grader_args]
        code = subprocess.run(grade, cwd=course.root).returncode
        if code:
            return code
        return _late(course)
    elif args.command == "late":
        return _late(course)
    elif args.command == "return":
        from .give_back import give_back

        for name, what in give_back(course).items():
            print(f"{name}: {what}")
    return 0


def _late(course) -> int:
    from .late import apply

    added = apply(course)
    print(json.dumps([f"{r.student} {r.lab}: {r.reason}" for r in added], indent=1) if added
          else "late rule: nothing late")
    _class_view(course)
    return 0


def _class_view(course) -> None:
    """The leaderboard and dashboard again, with the late rows (the late rule rewrote the feedback
    files too, so each gets its pseudonym line back); a failure here leaves the grades as they are."""
    from operator_course.grader import class_view

    try:
        subs = course.submissions if course.submissions.is_dir() else None  # graded elsewhere: no similarity run
        written = class_view.build(course.grades, subs, course.labs, course=course)
        print(f"class view: {written['leaderboard']}, {written['dashboard']}")
    except Exception as e:  # noqa: BLE001
        print(f"class view not rebuilt ({type(e).__name__}: {e}): python -m operator_course.grader.class_view "
              f"{course.grades} --course COURSE.toml", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
