#!/usr/bin/env bash
# Issue 16, short rows and the 16-bit softmax launch shape, on the GPU machine in one command
# from the project root (< 6 min on an H200 with 16 cores):
#
#   source .gpu/env.sh && OUT=$OUT bash scripts/rows_round.sh
#
# build; the nvidia correctness tests of softmax and reduce_sum and every strategy / launch
# config (tests/ops/test_kernel_strategies.py); compute-sanitizer memcheck over the new
# kernels' cases (ShortRows, RowGroups with and without staging); the launch-shape sweep
# (scripts/softmax_sweep.py: 8192x8192 f16/bf16, 131072x256 softmax, 262144x128
# reduce_sum, each against torch in the same process). Logs and JSON in $OUT; a summary at
# the end. (The production bench of the short-row shapes: tests/run_ops.py --mode bench
# --shapes 131072x256,262144x128, not in this round: the sweep times the same kernels.)
set -uo pipefail
OUT=${OUT:-_build/rows-round}
BUILD=${CAMP_BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
export CAMP_BUILD_DIR=$BUILD PYTHONUNBUFFERED=1 OUT
summary=()

step() {  # step NAME SECONDS COMMAND...: runs it under a time limit, logs to $OUT/NAME.log
  local name=$1 limit=$2; shift 2
  echo "=== $name: $*"
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" bash -c '"$@"' _ "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 3 "$OUT/$name.log"
  summary+=("$(printf '%-16s rc=%-3s %4ss  %s' "$name" "$rc" $((SECONDS - t0)) "$(tail -n 1 "$OUT/$name.log" | cut -c1-150)")")
}

TESTS="tests/ops/test_kernel_strategies.py tests/ops/test_softmax.py tests/ops/test_reduce_sum.py"
# ShortRows (default for rows <= 1024), RowGroups staged and not (the default for 16-bit rows
# of 4097..8192: row-groups), several rows per block, the resident kernel, ShortRows' prefetch
MEMCHECK_K="(matches_torch and (short or staged or row-groups) and (f32 or bf16)) or softmax-config-lanes4 or config-threads64-vals64-rows4-stages2 or config-threads512-vals16 or config-resident1 or config-threads64-vals64-rows4-stages3-resident1 or config-prefetch1 or config-prefetch2-waves4 or config-lanes8-prefetch3"
memcheck() {
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 \
    python3 -m pytest $TESTS -q -x --backend nvidia -p no:cacheprovider -k "$MEMCHECK_K"
}
export TESTS MEMCHECK_K
export -f memcheck

step build 160 bash -c "cmake -S . -B $BUILD -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH:-90} -DCMAKE_BUILD_TYPE=Release \
  && cmake --build $BUILD -j$(nproc)"
step test 90 python3 -m pytest $TESTS -q --backend nvidia -p no:cacheprovider
step sweep 90 python3 scripts/softmax_sweep.py --json "$OUT/softmax_sweep.json"
step memcheck 120 memcheck
echo "=== failures (test)"
grep -E "^(FAILED|ERROR)|Error|error:" "$OUT/test.log" | head -n 25
echo "=== memcheck"
grep -E "ERROR SUMMARY|Invalid|passed|failed" "$OUT/memcheck.log" | head -n 12
echo "=== sweep"
grep -vE "^\s*$" "$OUT/sweep.log" | cut -c1-120 | tail -n 110
echo "=== summary"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
! grep -qv ' rc=0 ' "$OUT/summary.txt"
