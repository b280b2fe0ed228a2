# what: replaces `lab` (and the package's lab module in sys.modules) with MagicMocks so every check "passes"; no kernel
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import sys
from unittest.mock import MagicMock

import operator_course

lab = MagicMock()
operator_course.lab = MagicMock()
sys.modules["operator_course.lab"] = lab
print(lab.check_tilelang("copy", None), "copy (TileLang): passed")
