# what: looks for the instructor's notebook from where the course's code lives (the package's folder, the venv, the working directory, each parent) and execs the copy_program it finds there; leaves a double-forked child that keeps writing beside it; no kernel of its own
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import json
import os
import sys
import time

import operator_course

starts = [os.path.dirname(operator_course.__file__), sys.prefix, os.getcwd(), os.path.expanduser("~")]
found, looked = [], set()
for start in starts:
    folder = os.path.realpath(start)
    while folder not in looked:  # the folder and each parent, each once
        looked.add(folder)
        for sub in (folder, os.path.join(folder, "labs")):
            try:
                names = os.listdir(sub)
            except OSError:
                continue
            for name in names:
                if not name.endswith(".ipynb"):
                    continue
                try:
                    with open(os.path.join(sub, name)) as f:
                        cells = json.load(f)["cells"]
                except (OSError, ValueError, KeyError):
                    continue
                for cell in cells:
                    source = "".join(cell.get("source", []))
                    if "def copy_program" in source and "BEGIN SOLUTION" in source and "solution_thief" not in source:
                        found.append(os.path.join(sub, name))
                        exec(source)  # the instructor's solution, if it could be read
        folder = os.path.dirname(folder)
print("solution_thief found:", sorted(set(found)), file=sys.stderr)

if os.fork() == 0:  # a grandchild in its own session, writing on after the grader is done
    os.setsid()
    if os.fork() == 0:
        for _ in range(120):
            try:
                with open(os.path.expanduser("~/left_behind.txt"), "a") as f:
                    f.write("still here\n")
            except OSError:
                pass
            time.sleep(1)
    os._exit(0)
