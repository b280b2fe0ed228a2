"""``course return``: each student's feedback (the grader's OUT/feedback/<student>.md) into
~/feedback/grades.md, written as the student (so it is theirs, and a link they planted cannot
send it anywhere they could not write themselves)."""

from __future__ import annotations

from . import accounts
from .config import Course


def give_back(course: Course) -> dict[str, str]:
    """student -> what happened."""
    done = {}
    for name in accounts.students(course.roster):
        source = course.grades / "feedback" / f"{name}.md"
        if not source.is_file():
            done[name] = "no feedback file"
            continue
        result = accounts.as_user(name, ["sh", "-c", 'umask 022 && mkdir -p feedback && cat > feedback/grades.md'],
                                  input=source.read_text(), text=True, capture_output=True)
        done[name] = "returned to ~/feedback/grades.md" if result.returncode == 0 else f"failed: {result.stderr}"
    return done
