#!/usr/bin/env bash
# Verify a tree on the GPU machine in one command (< 10 min on an H200, 16 cores): build, then
# the correctness suites in parallel processes (nvidia; tilelang in two halves; the labs under
# nbval with lab 5's mistakes and probe), compute-sanitizer over the nvidia kernels, the eager
# host times, and an ncu report of one launch of each goal kernel. Benchmarks are not here (they
# must run alone: scripts/gpu_check.sh STEPS=bench). From the project root:
#   run(command="OUT=$OUT bash scripts/gpu_verify_round.sh", carry=[".gpu"])
# STEPS="build labs memcheck" runs a subset; LIMIT (s) bounds each parallel suite.
set -uo pipefail
OUT=${OUT:-_build/gpu-verify} LOGS=${OUT:-_build/gpu-verify} BUDGET=${BUDGET:-100000}
source scripts/gpu_lib.sh  # cap, PY, SAN (logs beside the results: $LOGS = $OUT)
LIMIT=${LIMIT:-300}

cap build 200 bash -c "cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build-gpu -j16"
cap test-nvidia $LIMIT $PY tests/ops tests/test_plan_cache.py tests/test_c_contract.py tests/test_steps.py --backend nvidia &
cap test-tilelang-a $LIMIT $PY tests/ops/test_opinfo_tilelang.py tests/ops/test_tilelang_layouts.py tests/ops/test_matmul.py \
  tests/test_tilelang_compile.py --backend tilelang &
cap test-tilelang-b $LIMIT $PY tests/ops/test_copy.py tests/ops/test_vector_add.py tests/ops/test_reduce_sum.py \
  tests/ops/test_softmax.py tests/test_plan_cache.py --backend tilelang &
cap labs $LIMIT bash -c "$PY --nbval labs/; r1=\$?; $PY tests/test_lab_mistakes.py tests/test_lab_feedback.py -k matmul; r2=\$?; \
  python3 scripts/matmul_lab_probe.py --json $OUT/matmul-lab-probe.json | tail -n 15; exit \$((r1 | r2))" &
cap memcheck $LIMIT $SAN --tool memcheck $PY tests/ops -x --backend nvidia -k "matches_torch and (f32 or bf16) and not large-k" &
wait
cap racecheck 150 $SAN --tool racecheck $PY tests/ops/test_softmax.py tests/ops/test_reduce_sum.py tests/ops/test_matmul.py -x \
  --backend nvidia -k "matches_torch and bf16 and not large-k" &
cap initcheck 150 $SAN --tool initcheck $PY tests/ops/test_softmax.py tests/ops/test_reduce_sum.py tests/ops/test_vector_add.py -x \
  --backend nvidia -k "matches_torch and f32" &
wait
cap eager 90 python3 scripts/eager_host_times.py --backend nvidia,tilelang --json "$OUT/h200-eager-host.json"
cap ncu 120 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
  -k regex:'softmax|sum_block|sum_warp|sum_row|zip_tiles|matmul_mma' -c 8 python3 scripts/kernel_goals_once.py
echo "=== failures"; grep -hE "^(FAILED|ERROR) |========= (Invalid|Race|Uninit|ERROR SUMMARY: [1-9])" "$OUT"/*.log | head -40
echo "=== eager"; tail -n 14 "$OUT/eager.log"
echo "=== ncu"; grep -E "^  [a-z_].*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit Reg|Block Limit Shared|Grid Size|Block Size" "$OUT/ncu.log" | head -90
echo "=== summary"; cat "$OUT/summary.txt"
