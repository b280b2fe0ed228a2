#!/usr/bin/env bash
# A GPU round that fits a short device budget (~5 min on an H200): build, correctness of the
# nvidia kernels, tilelang and the lesson steps in parallel, then issue 16 and 14's goal benchmarks
# alone on the GPU (eager torch only; gpu_check.sh is the whole check). From the project root:
#   run(command="OUT=$OUT bash scripts/gpu_quick_round.sh", carry=[".gpu"])
set -uo pipefail
LOGS=$OUT BUDGET=${BUDGET:-100000}
source scripts/gpu_lib.sh  # cap (logs beside the results: $LOGS = $OUT)
cap build 150 bash -c "cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j16"
cap test-nvidia 170 python3 -m pytest tests/ops/test_matmul.py tests/ops/test_softmax.py tests/ops/test_reduce_sum.py \
  tests/ops/test_vector_add.py tests/ops/test_kernel_strategies.py tests/test_plan_cache.py -q --backend nvidia -p no:cacheprovider -rfs &
cap test-tilelang 170 python3 -m pytest tests/ops/test_matmul.py tests/ops/test_tilelang_layouts.py tests/ops/test_opinfo_tilelang.py \
  tests/ops/test_copy.py tests/ops/test_softmax.py -q --backend tilelang -p no:cacheprovider -rfs &
cap test-steps 170 python3 -m pytest tests/test_steps.py -q -p no:cacheprovider -rfs &
wait
cap bench-matmul 100 python3 tests/run_ops.py --op matmul --backend nvidia,tilelang --mode bench --no-torch-compile \
  --shapes "4096x4096x4096/f16,4096x4096x4096/bf16,8192x8192x8192/f16,8192x8192x8192/bf16,16x8192x8192/f16,128x8192x8192/bf16" --json "$OUT/bench-matmul.json"
for s in auto old; do
  cap bench-softmax-$s 45 env OPRT_SOFTMAX_STRATEGY=$s python3 tests/run_ops.py --op softmax --backend nvidia --mode bench \
    --no-torch-compile --shapes "8192x8192/f16,8192x8192/bf16,256x1048576/f32" --note "strategy=$s" --json "$OUT/bench-softmax-$s.json"
done
cap bench-reduce_sum 30 python3 tests/run_ops.py --op reduce_sum --backend nvidia --mode bench --no-torch-compile \
  --shapes "4096x32768/f32" --json "$OUT/bench-reduce_sum.json"
cap bench-vector_add 30 python3 tests/run_ops.py --op vector_add --backend nvidia --mode bench --no-torch-compile \
  --shapes "268435456/f32" --json "$OUT/bench-vector_add.json"
cat "$OUT"/bench-*.log | grep -E "^(nvidia|tilelang) " > "$OUT/bench-rows.txt"
cat "$OUT/summary.txt"; cat "$OUT/bench-rows.txt"
