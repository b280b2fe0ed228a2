#!/usr/bin/env bash
# The closing GPU round of issue 16, one command within BUDGET seconds (default 560), in two calls:
#   STEPS="build t-nvidia t-strategies sanitize labs ncu bench-columns"   the checks (call 1)
#   STEPS="build warm bench"                                             the whole benchmark (call 2)
# (STEPS picks steps by name, see scripts/gpu_lib.sh; default: all of them, which needs two budgets.)
#   build, warm     the runtime, and every TileLang kernel the bench runs compiled into the disk cache
#   t-nvidia        the nvidia suites of every operator (the column kernels' cases among them)
#   t-strategies    the strategy-override suite (every OPRT_*_STRATEGY / _CONFIG mode)
#   sanitize        compute-sanitizer memcheck, racecheck and initcheck over the column kernels, and
#                   memcheck over the bulk / cluster softmax cases
#   labs            labs 1-5 under nbval on the GPU, and every lab's mistakes and feedback
#   ncu             one launch of each goal kernel (scripts/kernel_goals_once.py): DRAM throughput,
#                   registers, occupancy
#   bench-columns   softmax and reduce_sum over dim 0 of 8192x8192 against torch and torch.compile
#   bench           the whole benchmark (nvidia and tilelang, torch and torch.compile) into $OUT/h200.json
#   run(command="STEPS='build ...' OUT=\$OUT bash scripts/gpu_closing_round.sh", carry=[".gpu"])
set -uo pipefail
BUDGET=${BUDGET:-560}
source scripts/gpu_lib.sh
STRATEGIES=tests/ops/test_kernel_strategies.py
OPS="tests/ops/test_copy.py tests/ops/test_vector_add.py tests/ops/test_reduce_sum.py tests/ops/test_softmax.py tests/ops/test_matmul.py"
COLUMNS="matches_torch and column"

cap build 150 bash -c "$BUILD" &
cap warm 200 python3 scripts/tilelang_warm.py --jobs 12
wait
cap t-nvidia 200 $PY $OPS --backend nvidia &
cap t-strategies 200 $PY $STRATEGIES --backend nvidia &
cap sanitize 240 bash -c "$SAN --tool memcheck $PY tests/ops/test_softmax.py tests/ops/test_reduce_sum.py --backend nvidia \
  -k '$COLUMNS'; a=\$?; \
  $SAN --tool racecheck $PY tests/ops/test_softmax.py --backend nvidia -k '$COLUMNS and (f32 or bf16)'; b=\$?; \
  $SAN --tool initcheck $PY tests/ops/test_softmax.py tests/ops/test_reduce_sum.py --backend nvidia -k '$COLUMNS and f16'; c=\$?; \
  $SAN --tool memcheck $PY tests/ops/test_softmax.py --backend nvidia -k 'matches_torch and (bulk or row-groups) and bf16'; d=\$?; \
  exit \$((a | b | c | d))" &
cap labs 240 bash -c "$PY --nbval labs/; r1=\$?; $PY tests/test_lab_mistakes.py tests/test_lab_feedback.py; exit \$((r1 | \$?))" &
wait
cap bench-columns 150 bash -c "for op in softmax reduce_sum; do python3 tests/run_ops.py --op \$op --backend nvidia \
  --mode bench --shapes 8192x8192 --json $OUT/bench_columns_\$op.json || exit 1; done"
cap ncu 90 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
  -k regex:'column' -c 3 python3 scripts/kernel_goals_once.py
cap bench 400 python3 tests/run_ops.py --op all --backend nvidia,tilelang --mode bench --json "$OUT/h200.json"
for t in t-nvidia t-strategies sanitize labs; do
  show $t "^(FAILED|ERROR)|ERROR SUMMARY: [1-9]|Invalid|Race|Hazard|Uninit|passed|failed" 14; done
show ncu "^  [a-z_].*\(|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Grid Size|Block Size" 40
show bench-columns "^(nvidia|tilelang) " 20
show bench "^(nvidia|tilelang) " 100
echo "=== summary ($((SECONDS - T0)) s)"; cat "$OUT/summary.txt"
