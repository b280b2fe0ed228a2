#!/usr/bin/env bash
# The tilelang backend's packed short rows and column kernels on the GPU machine, one command from
# the project root (~150 s on an H200 host of 16 cores, most of it compiling):
#
#   run(command="source .gpu/env.sh && OUT=$OUT bash scripts/tilelang_rows_round.sh", carry=[".gpu"])
#
# warm: every GPU kernel the reduce_sum and softmax tests and benchmarks pick, compiled in
# parallel into TileLang's disk cache (scripts/tilelang_warm.py), so the steps after it compile
# nothing; test: their suites on the tilelang backend (every dtype, the new cases' edges, the long
# column sums' accuracy against torch); bench: the short-row and column shapes against torch
# (eager only; 8192x8192 f32 gives a block per row and, over dim 0, the column kernels), with
# 4096x1024 (a block per row) for comparison. Logs and JSON in $OUT.
set -uo pipefail
OUT=${OUT:-_build/tilelang-rows}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
cap() { local name=$1 limit=$2; shift 2; local t0=$SECONDS
  timeout --kill-after=5 "$limit" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s :: $(tail -n 1 "$OUT/$name.log")" | tee -a "$OUT/summary.txt"; }
cap warm 240 python3 scripts/tilelang_warm.py --ops reduce_sum,softmax
cap test 240 python3 -m pytest tests/ops/test_reduce_sum.py tests/ops/test_softmax.py -q --backend tilelang \
  -p no:cacheprovider -rfs
cap bench-reduce_sum 90 python3 tests/run_ops.py --op reduce_sum --backend tilelang --mode bench --no-torch-compile \
  --shapes "262144x128/f32,262144x128/bf16,8192x8192/f32,4096x1024/f32" --json "$OUT/bench-reduce_sum.json"
cap bench-softmax 90 python3 tests/run_ops.py --op softmax --backend tilelang --mode bench --no-torch-compile \
  --shapes "131072x256/f32,131072x256/f16,131072x256/bf16,4096x1024/f32,8192x8192/f32" --json "$OUT/bench-softmax.json"
grep -hE "^tilelang " "$OUT"/bench-*.log > "$OUT/bench-rows.txt"
grep -E "FAILED|s  " "$OUT/warm.log" | sort -rn | head -5
cat "$OUT/summary.txt"; cat "$OUT/bench-rows.txt"
! grep -qv ' rc=0 ' "$OUT/summary.txt"
