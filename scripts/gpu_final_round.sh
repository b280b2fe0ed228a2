#!/usr/bin/env bash
# The closing GPU round of a session, in one command within a fixed budget (FINAL_BUDGET seconds,
# default 560): build; correctness of what changed, in parallel processes (nvidia ops, a tilelang
# subset, lab 5 and its mistakes, compute-sanitizer memcheck and a matmul racecheck); the eager
# host times; then the whole benchmark (every op, nvidia and tilelang, torch and torch.compile in
# the same run) into $OUT/h200.json, written after every op, with whatever time is left. From the
# project root:   run(command="OUT=$OUT bash scripts/gpu_final_round.sh", carry=[".gpu"])
# STEPS="build test-nvidia ..." runs a subset (a run call is limited to 600 s: split the round in two
# calls, the second finding the machine warm and the build in place).
set -uo pipefail
OUT=${OUT:-_build/gpu-final} LOGS=${OUT:-_build/gpu-final} BUDGET=${FINAL_BUDGET:-640}
source scripts/gpu_lib.sh  # cap, PY, SAN (logs beside the results: $LOGS = $OUT)

cap build 150 bash -c "cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build-gpu -j16"
cap test-nvidia 120 $PY tests/ops tests/test_plan_cache.py tests/test_c_contract.py --backend nvidia &
cap test-tilelang 120 $PY tests/ops/test_copy.py tests/ops/test_vector_add.py tests/ops/test_softmax.py tests/ops/test_reduce_sum.py \
  tests/test_plan_cache.py --backend tilelang -k "matches_torch and f32 or plan or cache" &
cap lab5 120 $PY --nbval labs/05_matmul.ipynb tests/test_lab_mistakes.py tests/test_steps.py -k "matmul" &
cap memcheck 120 $SAN --tool memcheck $PY tests/ops -x --backend nvidia -k "matches_torch and (f32 or bf16) and not large-k" &
cap racecheck 120 $SAN --tool racecheck $PY tests/ops/test_matmul.py tests/ops/test_softmax.py -x --backend nvidia \
  -k "matches_torch and bf16 and not large-k" &
cap initcheck 120 $SAN --tool initcheck $PY tests/ops/test_softmax.py tests/ops/test_reduce_sum.py tests/ops/test_vector_add.py -x \
  --backend nvidia -k "matches_torch and f32" &
wait
cap eager 40 python3 scripts/eager_host_times.py --backend nvidia,tilelang --json "$OUT/h200-eager-host.json"
cap sweep 45 python3 scripts/softmax_sweep.py --json "$OUT/softmax_sweep.json"
cap bench 330 python3 tests/run_ops.py --op all --backend nvidia,tilelang --mode bench --json "$OUT/h200.json"
cap ncu 45 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
  -k regex:'softmax|sum_block|sum_warp|sum_row|zip_tiles|matmul' -c 8 python3 scripts/kernel_goals_once.py
cap steps-matmul 150 python3 scripts/step_bench.py --ops matmul --json "$OUT/steps-matmul.json"
echo "=== failures"; grep -hE "^(FAILED|ERROR) |========= (Invalid|Race|Uninit|ERROR SUMMARY: [1-9])" "$OUT"/*.log | head -30
echo "=== eager"; tail -n 9 "$OUT/eager.log"
echo "=== bench"; grep -E "^(nvidia|tilelang) " "$OUT/bench.log" | cut -c1-150
echo "=== sweep"; grep -E "^(== |best |auto|staged|old|.*resident|.*waves|.*prefetch)" "$OUT/sweep.log" | cut -c1-100 | head -70
echo "=== ncu"; grep -E "^  [a-z_].*\(|Duration|DRAM Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy" "$OUT/ncu.log" | cut -c1-140 | head -60
echo "=== steps"; grep -E "matmul" "$OUT/steps-matmul.log" | tail -n 20 | cut -c1-150
echo "=== summary ($((SECONDS - T0)) s)"; cat "$OUT/summary.txt"
