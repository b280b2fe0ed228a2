#!/usr/bin/env bash
# Issue 16's kernel goals on the GPU machine, in one command from the project root (< 8 min
# on an H200):
#
#   source .gpu/env.sh && OUT=$OUT bash scripts/kernel_goals.sh
#
# build (CUDA_ARCH, default 90); the correctness tests of softmax, reduce_sum and vector_add
# on nvidia (every case, also under each strategy override, and the long-column accuracy
# test); compute-sanitizer memcheck, racecheck and initcheck over those ops' cases; the
# benchmarks of exactly the goal shapes, each new strategy beside the old one
# (OPRT_*_STRATEGY=old) with eager torch and torch.compile in the same run; ncu
# SpeedOfLight + Occupancy on one launch of each new kernel. Logs and JSON land in $OUT.
set -uo pipefail
OUT=${OUT:-_build/kernel-goals}
BUILD=${CAMP_BUILD_DIR:-build-gpu}
ARCH=${CUDA_ARCH:-90}
mkdir -p "$OUT"
export CAMP_BUILD_DIR=$BUILD PYTHONUNBUFFERED=1
summary=()

step() {  # step NAME SECONDS COMMAND...: runs it under a time limit, logs to $OUT/NAME.log
  local name=$1 limit=$2; shift 2
  echo "=== $name: $*"
  local t0=$SECONDS
  # through bash -c: the command may be one of the functions below (exported), which
  # timeout alone could not run
  timeout --kill-after=10 "$limit" bash -c '"$@"' _ "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 4 "$OUT/$name.log"
  summary+=("$(printf '%-22s rc=%-3s %4ss  %s' "$name" "$rc" $((SECONDS - t0)) "$(tail -n 1 "$OUT/$name.log")")")
}

OPS_TESTS="tests/ops/test_softmax.py tests/ops/test_reduce_sum.py tests/ops/test_vector_add.py"
sanitize() {  # compute-sanitizer TOOL over the touched ops' correctness cases (f32 and bf16)
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool "$1" --error-exitcode 99 --print-limit 20 \
    python3 -m pytest $OPS_TESTS -q -x --backend nvidia -k "matches_torch and (f32 or bf16)" -p no:cacheprovider
}

bench() {  # bench OP SHAPES VARIABLE=VALUE [--no-torch-compile]: one labelled bench run
  local op=$1 shapes=$2 setting=$3; shift 3
  env "$setting" python3 tests/run_ops.py --op "$op" --backend nvidia --mode bench --shapes "$shapes" \
    --note "$setting" --json "$OUT/bench-$op-${setting##*=}.json" "$@"
}

export OUT OPS_TESTS
export -f sanitize bench

step build 240 bash -c "cmake -S . -B $BUILD -DCMAKE_CUDA_ARCHITECTURES=$ARCH -DCMAKE_BUILD_TYPE=Release \
  && cmake --build $BUILD -j$(nproc)"
step test 120 python3 -m pytest tests/ops -q --backend nvidia -k "softmax or reduce_sum or vector_add" -p no:cacheprovider
step memcheck 90 sanitize memcheck
step racecheck 90 sanitize racecheck
step initcheck 90 sanitize initcheck
# New strategies (auto) with torch.compile as the peer; the old ones beside them (eager torch
# is timed again in each run; torch.compile once is enough).
SOFTMAX_SHAPES="8192x8192/f16,8192x8192/bf16,8192x8192/f32,256x1048576/f32,131072x256/f32"
step bench-softmax-auto 150 bench softmax "$SOFTMAX_SHAPES" OPRT_SOFTMAX_STRATEGY=auto
step bench-softmax-old 60 bench softmax "$SOFTMAX_SHAPES" OPRT_SOFTMAX_STRATEGY=old --no-torch-compile
step bench-softmax-staged 40 bench softmax "8192x8192/f32" OPRT_SOFTMAX_STRATEGY=staged --no-torch-compile
step bench-reduce_sum-auto 60 bench reduce_sum "4096x32768/f32,262144x128/f32" OPRT_REDUCE_SUM_STRATEGY=auto
step bench-reduce_sum-old 40 bench reduce_sum "4096x32768/f32,262144x128/f32" OPRT_REDUCE_SUM_STRATEGY=old --no-torch-compile
step bench-vector_add-auto 60 bench vector_add "268435456/f32" OPRT_VECTOR_ADD_STRATEGY=auto
step bench-vector_add-old 40 bench vector_add "268435456/f32" OPRT_VECTOR_ADD_STRATEGY=old --no-torch-compile
step ncu 120 ncu --section SpeedOfLight --section Occupancy \
  -k regex:'softmax_staged|softmax_row_grid|softmax_row_groups|sum_row_groups|sum_block_per_piece|zip_tiles_kernel' -c 6 \
  python3 scripts/kernel_goals_once.py

echo "=== benchmark rows (ours ms, torch ms, torch.compile ms, ratio to the best torch)"
cat "$OUT"/bench-*.log 2>/dev/null | grep -E '^nvidia ' | tee "$OUT/bench-rows.txt"
echo "=== summary"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
! grep -qv ' rc=0 ' "$OUT/summary.txt"
