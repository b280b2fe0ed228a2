"""Runs a command that must not outlive the hub (its services: the idle culler, the site server):

    python -m operator_course.hosting.with_hub HUB_PID COMMAND...   (hub_config.py starts them so)

asks Linux to send it SIGTERM when its parent, the hub, dies (prctl PR_SET_PDEATHSIG, kept across
exec), then becomes COMMAND. Without it a crashed hub left them running: the restarted hub's site
service found its port taken and two cullers ran (issue 30). The students' servers are not started
so: they outlive a hub restart on purpose.

COMMAND gets SIGINT and SIGTERM as Linux's defaults, whatever the hub inherited: a hub started with
SIGINT ignored (from a script's background job, `cmd &`) started its services before it set its own
handlers, so they ignored the SIGINT it stops them with, and JupyterHub waited its 30 s
interrupt_timeout for each in turn: SIGTERM took the hub 40-73 s (issue 30)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main() -> None:
    hub, command = int(sys.argv[1]), sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != hub:  # the hub died before the prctl: no signal will come
        sys.exit(f"with_hub: the hub (pid {hub}) is gone; not starting {command[0]}")
    for sig in (signal.SIGINT, signal.SIGTERM):  # an ignored signal stays ignored across exec
        signal.signal(sig, signal.SIG_DFL)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
