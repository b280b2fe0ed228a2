#!/usr/bin/env bash
# The tilelang backend's packed short rows and column kernels (reduce_sum, softmax) on the GPU
# machine, one command from the project root (BUDGET seconds, default 240; ~150 s on an H200 host
# of 16 cores, most of it compiling; STEPS="warm test" runs a subset, see scripts/gpu_lib.sh):
#   run(command="OUT=$OUT bash scripts/tilelang_rows_round.sh", carry=[".gpu"])
#   build   the runtime (incremental), beside warm
#   warm    every GPU kernel the reduce_sum and softmax tests and benchmarks pick (45, from
#           _layout), compiled in parallel into TileLang's disk cache (scripts/tilelang_warm.py),
#           so the steps after it compile nothing
#   test    their suites on the tilelang backend: every dtype, the new cases' edges, the long
#           column sums' accuracy against torch (which kernel each call picks:
#           tests/ops/test_tilelang_layouts.py, on any machine)
#   bench-* the short-row shapes and 8192x8192 f32 (rows, and columns over dim 0) against eager
#           torch, with 4096x1024 (a block per row) for comparison; JSON in $OUT
set -uo pipefail
BUDGET=${BUDGET:-240}
source scripts/gpu_lib.sh

cap build 120 bash -c "$BUILD" &
cap warm 150 python3 scripts/tilelang_warm.py --ops reduce_sum,softmax --jobs 14
wait
cap test 150 $PY tests/ops/test_reduce_sum.py tests/ops/test_softmax.py --backend tilelang
cap bench-reduce_sum 60 python3 tests/run_ops.py --op reduce_sum --backend tilelang --mode bench --no-torch-compile \
  --shapes "262144x128/f32,262144x128/bf16,8192x8192/f32,4096x1024/f32" --json "$OUT/bench-reduce_sum.json"
cap bench-softmax 60 python3 tests/run_ops.py --op softmax --backend tilelang --mode bench --no-torch-compile \
  --shapes "131072x256/f32,131072x256/f16,131072x256/bf16,4096x1024/f32,8192x8192/f32" --json "$OUT/bench-softmax.json"
show warm "FAILED|compiled in" 20
show test "FAILED|ERROR|passed|failed" 30
show bench-reduce_sum "^tilelang " 20
show bench-softmax "^tilelang " 20
cat "$OUT/summary.txt"
! grep -qv ' rc=0 ' "$OUT/summary.txt"
