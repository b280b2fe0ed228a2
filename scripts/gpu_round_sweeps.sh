#!/usr/bin/env bash
# A GPU round of sweeps and checks for issue 14 and 16's misses, one command (BUDGET seconds,
# default 540; STEPS="build lab5 ..." runs a subset, see scripts/gpu_lib.sh):
#   build            the runtime (nvidia and CPU backends)
#   lab5             lab 5 under nbval and its mistakes (the bf16 accumulator hint), verbose
#   mm-tests         the tilelang matmul suite on the GPU (the CONFIGS in use)
#   compile          TileLang matmul sweep candidates into the disk cache (parallel)
#   copy-compile     TileLang copy kernels of the element-wise sweep into the disk cache
#   mm-sweep         the TileLang matmul sweep (scripts/matmul_tilelang_sweep.py)
#   ew-sweep         nvidia vector_add tile shapes, TileLang copy block sizes
#   short            the short-row benchmark of today's defaults (softmax, reduce_sum)
#   mm-bench         matmul rows of the course benchmark (nvidia and tilelang, torch and torch.compile)
#   mm-steps         the matmul chapter's steps (scripts/step_bench.py)
#   t-bulk           softmax's bulk kernel (softmax_bulk.cuh) on every softmax case, forced
#   san-bulk         compute-sanitizer memcheck and racecheck over the bulk kernel
#   t-copy           tilelang copy on the GPU (the aligned kernel, storage offsets, the plan cache)
#   t-matmul         the nvidia matmul suite (the CUDA-core kernel's register tiles)
#   bulk-sweep       the bulk kernel's block shapes against auto (scripts/softmax_sweep.py)
# The tests and compiles run side by side, the timings alone on the GPU.
#   run(command="OUT=$OUT bash scripts/gpu_round_sweeps.sh", carry=[".gpu"])
set -uo pipefail
BUDGET=${BUDGET:-540}
source scripts/gpu_lib.sh

cap build 150 bash -c "$BUILD"
cap lab5 170 $PY -v --nbval labs/05_matmul.ipynb tests/test_lab_mistakes.py -k "matmul or 05" &
cap mm-tests 170 $PY tests/ops/test_matmul.py --backend tilelang &
cap compile 170 python3 scripts/matmul_tilelang_sweep.py --compile-only --jobs 10 &
cap copy-compile 170 python3 scripts/elementwise_sweep.py --compile-only &
cap t-bulk 150 env OPRT_SOFTMAX_STRATEGY=bulk $PY tests/ops/test_softmax.py tests/ops/test_kernel_strategies.py \
  --backend nvidia -k "not kernel_strategies or softmax-bulk" &
cap san-bulk 150 bash -c "OPRT_SOFTMAX_STRATEGY=bulk $SAN --tool memcheck $PY tests/ops/test_softmax.py --backend nvidia \
  -k 'matches_torch and (staged or bulk or row-groups or row-5000) and (f16 or f32)'; m=\$?; \
  OPRT_SOFTMAX_STRATEGY=bulk $SAN --tool racecheck $PY tests/ops/test_softmax.py --backend nvidia \
  -k 'matches_torch and (bulk or staged-rows) and bf16'; exit \$((m | \$?))" &
cap t-copy 170 $PY tests/ops/test_copy.py tests/ops/test_vector_add.py tests/test_plan_cache.py --backend tilelang \
  -k "matches or unaligned or storage_offset" &
cap t-matmul 150 $PY tests/ops/test_matmul.py tests/test_steps.py --backend nvidia -k "matmul or f32" &
wait
cap bulk-sweep 90 python3 scripts/softmax_sweep.py --only softmax-bulk-f16 softmax-bulk-bf16 softmax-bulk-f32 \
  softmax-bulk-f16-4096 --json "$OUT/bulk_sweep.json"
cap mm-sweep 90 python3 scripts/matmul_tilelang_sweep.py --jobs 10 --budget 50 --json "$OUT/matmul_sweep.json"
cap ew-sweep 110 python3 scripts/elementwise_sweep.py ${EW_ONLY:+--only $EW_ONLY} --json "$OUT/elementwise_sweep.json"
cap short 60 python3 tests/run_ops.py --op all --backend nvidia --mode bench \
  --shapes 131072x256,262144x128 --json "$OUT/short_rows.json"
cap mm-bench 150 python3 tests/run_ops.py --op matmul --backend nvidia,tilelang --mode bench --json "$OUT/matmul_bench.json"
cap mm-steps 170 python3 scripts/step_bench.py --ops matmul --json "$OUT/steps-matmul.json"
show lab5 "^(FAILED|ERROR)|Error|assert|hint|passed|failed" 40
for t in t-bulk san-bulk t-copy t-matmul; do show $t "^(FAILED|ERROR)|ERROR SUMMARY|Invalid|Race|passed|failed" 16; done
show bulk-sweep "^==|^auto|^bulk|ceiling" 40
show mm-tests "^(FAILED|ERROR)|passed|failed" 20
show mm-sweep "best|^  [0-9]" 20
show ew-sweep "." 40
show short "^(nvidia|tilelang) " 20
show mm-bench "^(nvidia|tilelang) " 30
show mm-steps "matmul" 20
echo "=== summary ($((SECONDS - T0)) s)"; cat "$OUT/summary.txt"
