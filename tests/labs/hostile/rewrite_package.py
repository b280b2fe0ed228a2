# what: no kernel; tries to rewrite the grader's own modules (run_one, runner, score, judge, export, found via __file__), torch.testing, and to drop a .pth/sitecustomize into site-packages
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import os
import site
import sys

import torch.testing

from operator_course.grader import export, run_one, runner, score
from operator_course.lab import judge

targets = [m.__file__ for m in (run_one, runner, score, judge, export, torch.testing)]
for path in targets:
    try:
        data = open(path, "rb").read()
        with open(path, "r+b") as f:  # its own bytes back: a broken sandbox shows (WROTE), nothing is harmed
            f.write(data)
        print("WROTE", path)
    except OSError as e:
        print("could not write", path, e)
    try:
        os.utime(path)
        print("TOUCHED", path)
    except OSError as e:
        print("could not touch", path, e)
for folder in {*site.getsitepackages(), os.path.dirname(os.path.dirname(run_one.__file__)), sys.prefix}:
    for name in ("zz_oprt_hostile.pth", "sitecustomize.py"):
        path = os.path.join(folder, name)
        try:
            with open(path, "x") as f:
                f.write("import sys; print('HOSTILE CODE LOADED', file=sys.stderr)\n")
            print("CREATED", path)
        except OSError as e:
            print("could not create", path, e)
