# what: no kernel; forges a read-only report.json whose first cell "state" is 600,000 characters, then kills its kernel: the reasons quoting it must be cut, or the gradebook gets cells past csv's 131072-character limit and the next regrade into the same OUT cannot read it
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import json, os
state = "error: X: " + ("A" * 600_000)
with open("report.json", "w") as f:
    json.dump({"cells": [state], "stopped": None}, f)
os.chmod("report.json", 0o444)
os._exit(0)
