#!/usr/bin/env bash
# The closing GPU round of issue 14 and 16's second session, one command within BUDGET seconds
# (default 560; STEPS="build ..." runs a subset, see scripts/gpu_lib.sh):
#   build, warm   the runtime, and every TileLang reduce_sum / softmax kernel compiled into the disk cache
#   t-tilelang    the tilelang reduce_sum and softmax suites (packed short rows, leading-dim kernels)
#   t-nvidia      the nvidia softmax suite (Bulk by default for 16-bit rows of 4096..8192) and the
#                 strategy suite's softmax modes (bulk shapes, cluster, long rows)
#   t-cluster     the softmax suite with OPRT_SOFTMAX_STRATEGY=cluster forced
#   sanitize      compute-sanitizer memcheck over the bulk and cluster cases, racecheck over both
#   labs          labs 1-4 under nbval on the GPU (their answers are now variants of the chapters')
#   lab-mistakes  lab 5 under nbval, and every lab's mistakes and feedback (lab 5's nvcc hint)
#   long-sweep    256x1048576 f32 / bf16 and 64x4194304 f32: the online kernel against Cluster's shapes
#   bench         the whole benchmark (nvidia and tilelang, torch and torch.compile) into $OUT/h200.json
#   bench-cluster 256x1048576 with Cluster forced (--note strategy=cluster), for the default's decision
#   run(command="OUT=$OUT bash scripts/gpu_closing_round.sh", carry=[".gpu"])
set -uo pipefail
BUDGET=${BUDGET:-560}
source scripts/gpu_lib.sh
STRATEGIES=tests/ops/test_kernel_strategies.py

cap build 150 bash -c "$BUILD" &
cap warm 150 python3 scripts/tilelang_warm.py --ops reduce_sum,softmax --jobs 12
wait
cap t-tilelang 170 $PY tests/ops/test_reduce_sum.py tests/ops/test_softmax.py --backend tilelang &
cap t-nvidia 170 $PY tests/ops/test_softmax.py $STRATEGIES --backend nvidia -k "not kernel_strategies or softmax" &
cap t-cluster 120 env OPRT_SOFTMAX_STRATEGY=cluster $PY tests/ops/test_softmax.py --backend nvidia &
cap sanitize 170 bash -c "$SAN --tool memcheck $PY tests/ops/test_softmax.py --backend nvidia \
  -k 'matches_torch and (bulk or row-groups or staged) and (f16 or bf16)'; a=\$?; \
  $SAN --tool memcheck $PY $STRATEGIES --backend nvidia -k 'long_rows and softmax-cluster'; b=\$?; \
  $SAN --tool racecheck $PY tests/ops/test_softmax.py --backend nvidia -k 'matches_torch and bulk-rows and bf16'; c=\$?; \
  $SAN --tool racecheck $PY $STRATEGIES --backend nvidia -k 'special_value_in_one_piece and softmax-cluster'; d=\$?; \
  exit \$((a | b | c | d))" &
cap labs 170 $PY --nbval labs/01_copy.ipynb labs/02_vector_add.ipynb labs/03_reduce_sum.ipynb labs/04_softmax.ipynb &
cap lab-mistakes 170 $PY --nbval labs/05_matmul.ipynb tests/test_lab_mistakes.py tests/test_lab_feedback.py &
wait
cap long-sweep 60 python3 scripts/softmax_sweep.py --only softmax-long-f32 softmax-long-bf16 softmax-long4m-f32 \
  --json "$OUT/long_sweep.json"
cap bench-cluster 40 env OPRT_SOFTMAX_STRATEGY=cluster python3 tests/run_ops.py --op softmax --backend nvidia \
  --mode bench --shapes 256x1048576 --note strategy=cluster --json "$OUT/bench_cluster.json"
cap bench 330 python3 tests/run_ops.py --op all --backend nvidia,tilelang --mode bench --json "$OUT/h200.json"
for t in t-tilelang t-nvidia t-cluster sanitize labs lab-mistakes; do
  show $t "^(FAILED|ERROR)|ERROR SUMMARY: [1-9]|Invalid|Race|Hazard|passed|failed" 14; done
show long-sweep "^==|^auto|^cluster|^rowgrid|best" 40
show bench-cluster "^nvidia " 4
show bench "^(nvidia|tilelang) " 100
echo "=== summary ($((SECONDS - T0)) s)"; cat "$OUT/summary.txt"
