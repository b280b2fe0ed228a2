# what: no kernel; forks up to 300 processes (each sleeps 60 s) and starts up to 300 threads, counting what the limits allow
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import os
import threading
import time

kids, threads = [], []
for i in range(300):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork refused after", i, e)
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    kids.append(pid)
for i in range(300):
    try:
        t = threading.Thread(target=time.sleep, args=(60,), daemon=True)
        t.start()
        threads.append(t)
    except RuntimeError as e:
        print("thread refused after", i, e)
        break
print(len(kids), "processes,", len(threads), "threads")
