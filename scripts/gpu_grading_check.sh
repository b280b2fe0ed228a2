#!/usr/bin/env bash
# The grading check on the GPU machine, one command (logs under $OUT): the instructor labs under
# nbval, then the grading tests (control, hostile and malformed classes, sandboxed with the
# bubblewrap .gpu/ carries), where CUDA checks run and are timed instead of pending.
#   source .gpu/env.sh && OUT=/some/dir bash scripts/gpu_grading_check.sh
set -uo pipefail
OUT=${OUT:-_build/gpu-grading}
mkdir -p "$OUT"
command -v bwrap && bwrap --version
python3 -m pytest --nbval labs/ -q -p no:cacheprovider > "$OUT/labs.log" 2>&1; echo "labs rc=$?" | tee -a "$OUT/summary.txt"
tail -n 3 "$OUT/labs.log"
python3 -m pytest tests/test_grading.py -q -p no:cacheprovider -o addopts="-ra" --basetemp=/tmp/grading-tests \
  > "$OUT/grading.log" 2>&1; echo "grading rc=$?" | tee -a "$OUT/summary.txt"
tail -n 30 "$OUT/grading.log"
cp -r /tmp/grading-tests/grading0/grades "$OUT/grades" 2>/dev/null
! grep -qv ' rc=0$' "$OUT/summary.txt"
