# what: no kernel; writes 400 MB to stdout (200 MB through sys.stdout, 200 MB straight to fd 1)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import os
import sys

line = "x" * ((1 << 20) - 1) + "\n"
try:
    for i in range(200):
        sys.stdout.write(line)
    data = line.encode()
    for i in range(200):
        os.write(1, data)
except OSError as e:
    print("stopped:", e)
