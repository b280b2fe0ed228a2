# what: hunts for the instructor's notebook (labs/*.ipynb globs, every *.ipynb on disk, /proc/*/cmdline, /proc/1/environ), prints what it finds and execs any solution found; else no kernel
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import glob
import json
import os
import time

for pid in sorted(glob.glob("/proc/[0-9]*")):
    for what in ("cmdline", "environ", "cwd"):
        try:
            value = os.readlink(f"{pid}/cwd") if what == "cwd" else open(f"{pid}/{what}").read().replace("\0", " ")
            print(pid, what, value[:300])
        except OSError as e:
            print(pid, what, "unreadable:", e)
candidates = set()
for pattern in ("/work/main/labs/*.ipynb", "/work/*/labs/*.ipynb", "/tmp/*/labs/*.ipynb", "/home/*/labs/*.ipynb",
                "../labs/*.ipynb", "../../labs/*.ipynb", "/labs/*.ipynb", "/srv/*/*.ipynb"):
    candidates.update(glob.glob(pattern))
start = time.monotonic()
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
    candidates.update(os.path.join(root, f) for f in files if f.endswith(".ipynb"))
    if time.monotonic() - start > 30:
        break
print("notebooks found:", sorted(candidates))
for path in sorted(candidates):
    try:
        nb = json.load(open(path))
    except Exception as e:  # noqa: BLE001
        print(path, "unreadable:", e)
        continue
    for cell in nb.get("cells", []):
        source = "".join(cell.get("source", ""))
        # the markers spelled in two pieces, so this very cell (in the notebook being run) does not match
        if "### BEGIN " + "SOLUTION" in source and "@T." + "prim_func" in source:
            print("SOLUTION FOUND in", path)
            exec(source.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""), globals())
