# what: no kernel; fills HOME with 80 files of 63 MiB and 200,000 empty files, prints how far it got and removes them (so its executed notebook can be saved: the grading test reads it back)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import os

written = files = 0
chunk = b"\1" * (63 << 20)
try:
    for i in range(80):
        with open(os.path.expanduser(f"~/big{i}"), "wb") as f:
            f.write(chunk)
        written += len(chunk)
except OSError as e:
    print("big files stopped:", e)
try:
    for i in range(200_000):
        open(os.path.expanduser(f"~/empty{i}"), "w").close()
        files += 1
except OSError as e:
    print("empty files stopped:", e)
for name in os.listdir(os.path.expanduser("~")):
    if name.startswith(("big", "empty")):
        os.remove(os.path.expanduser(f"~/{name}"))
print(f"DISK_FILLER wrote {written} bytes and {files} empty files")
