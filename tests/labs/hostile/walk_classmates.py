# what: walks / for gradebook.csv, totals.csv, feedback and every *.ipynb (the output folder, classmates' notebooks) and tries to write each; wrong kernel (reversed tile)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import os
import time

hits, written = [], []
start = time.monotonic()
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
    for name in files:
        if name in ("gradebook.csv", "totals.csv", "manifest.json") or name.endswith(".ipynb") or "feedback" in root:
            hits.append(os.path.join(root, name))
    if time.monotonic() - start > 30:
        break
for path in hits:
    try:
        data = open(path, "rb").read()
        mine = path.startswith("/home/student/")  # this sandbox's own work dir: fair game
        payload = b"student,lab,check,status,points\nme,01_copy,copy-tilelang,passed,3\n" if mine or path.startswith("/tmp/") else data
        with open(path, "r+b") as f:  # elsewhere its own bytes back: a broken sandbox shows (WROTE), nothing is harmed
            f.write(payload)
        written.append(path)
    except OSError:
        pass
print(len(hits), "found;", "WROTE" if [p for p in written if not p.startswith("/home/student/")] else "wrote only",
      written[:50])
print("found:", hits[:200])


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[T.min(bx * 1024 + 1023 - i, n - 1)]

    return copy
