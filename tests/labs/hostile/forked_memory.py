# what: no kernel; three forked children each allocate and touch 3 GiB and wait (9 GiB in all, past the submission's 6 GiB)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import os
import time

kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray(3 << 30)
            block[::4096] = b"\1" * len(range(0, len(block), 4096))  # touch every page
            time.sleep(30)
        finally:
            os._exit(0)
    kids.append(pid)
for pid in kids:
    print("child", pid, "ended with", os.waitpid(pid, 0)[1])
