# what: hunts for the grader's secret seed and the instructor's files (/run/oprt-grade, /proc/*/cmdline, /work, the jobs.json of a runner), reports what it saw, and leaves a setsid'd sleeper behind; no kernel
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import glob
import os
import subprocess

seen = []
for pattern in ("/run/oprt-grade/*", "/proc/*/cmdline", "/home/*/jobs.json", "/tmp/oprt-grade-*", "/sys/fs/cgroup/*"):
    for path in glob.glob(pattern):
        try:
            with open(path, "rb") as f:
                seen.append((path, f.read(200)))
        except OSError:
            pass
print("SEED_HUNTER saw", [p for p, data in seen if b"seed" in data or b"oprt-grade" in data])
subprocess.Popen(["setsid", "sleep", "600"], start_new_session=True)
