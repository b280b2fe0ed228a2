# Shared by the GPU round scripts (source it from the project root on the GPU machine):
#   cap NAME LIMIT CMD...   runs CMD under a time limit (the smaller of LIMIT and what is left of
#                           BUDGET seconds), its output in $LOGS/NAME.log, one summary line in
#                           $OUT/summary.txt; skipped unless NAME is in STEPS (default: all).
#   show NAME PATTERN [N]   prints the log lines matching PATTERN (at most N, default 40).
# Logs stay on the machine ($LOGS): a run call brings back at most 8 files from $OUT, so a round
# prints what matters and keeps only its JSON results and summary there.
source .gpu/env.sh
export CAMP_BUILD_DIR=build-gpu PYTHONUNBUFFERED=1
OUT=${OUT:-_build/gpu-round}; LOGS=${LOGS:-/tmp/gpu-logs}; mkdir -p "$OUT" "$LOGS"
T0=$SECONDS; BUDGET=${BUDGET:-560}
PY="python3 -m pytest -q -p no:cacheprovider -rfE"
SAN="env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --error-exitcode 99 --print-limit 10"

left() { local l=$(( BUDGET - (SECONDS - T0) )); (( l < $1 )) && echo $(( l > 5 ? l : 5 )) || echo "$1"; }
cap() { local name=$1 limit; limit=$(left "$2"); shift 2; local t0=$SECONDS
  case " ${STEPS:-all} " in *" all "*|*" $name "*) ;; *) return 0 ;; esac
  timeout -s INT --kill-after=15 "$limit" "$@" > "$LOGS/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s/${limit}s :: $(tail -n 1 "$LOGS/$name.log" | cut -c1-160)" | tee -a "$OUT/summary.txt"; }
show() { [ -f "$LOGS/$1.log" ] || return 0; echo "=== $1"; grep -E "$2" "$LOGS/$1.log" | cut -c1-170 | head -n "${3:-40}"; }
BUILD="cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build-gpu -j16;"
