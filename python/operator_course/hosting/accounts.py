"""Students as real Unix users, made from the roster: each with a home of mode 0700 (nobody else
reads their work) and a password, generated for new users and written to the root-only
passwords file (``student password`` per line) for the instructor to hand out. Existing users
keep theirs."""

from __future__ import annotations

import os
import pwd
import re
import secrets
import subprocess
from pathlib import Path

from operator_course.grader.submissions import read_roster

UNIX_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")


def students(roster: Path) -> list[str]:
    names = read_roster(roster)
    bad = [n for n in names if not UNIX_NAME.match(n)]
    if bad:
        raise ValueError(f"{roster}: not usable as Unix user names (lower case, digits, _ and -): {bad}")
    return names


def exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def ensure(names: list[str], passwords: Path) -> dict[str, str]:
    """Creates the users missing; returns the passwords made now (name -> password)."""
    made = {}
    for name in names:
        if not exists(name):
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment", "course student",
                            name], check=True)
            made[name] = secrets.token_urlsafe(12)
        os.chmod(pwd.getpwnam(name).pw_dir, 0o700)
    if made:
        subprocess.run(["chpasswd"], input="".join(f"{n}:{p}\n" for n, p in made.items()), text=True, check=True)
        passwords.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(passwords, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "a") as f:
            f.writelines(f"{n} {p}\n" for n, p in made.items())
        os.chmod(passwords, 0o600)
    return made


def as_user(name: str, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    """``argv`` run as the student (their uid, gid and groups, cwd their home): what it writes,
    and the links it follows, are only what the student could reach anyway."""
    user = pwd.getpwnam(name)
    env = {"HOME": user.pw_dir, "USER": name, "LOGNAME": name, "PATH": "/usr/local/bin:/usr/bin:/bin"}
    return subprocess.run(argv, user=user.pw_uid, group=user.pw_gid, extra_groups=os.getgrouplist(name, user.pw_gid),
                          cwd=user.pw_dir, env=env, **kwargs)
