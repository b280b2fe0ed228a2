#!/usr/bin/env bash
# Issue 16, long rows read once (softmax Cluster: a thread-block cluster per row, sm_90), on
# the GPU machine in one command from the project root (~3 min after the build on an H200):
#
#   source .gpu/env.sh && CAMP_BUILD_DIR=build-gpu bash scripts/cluster_round.sh
#
# build (sm_90); the nvidia softmax tests with OPRT_SOFTMAX_STRATEGY=cluster forced (a
# cluster that cannot run fails loudly there, so nothing passes through another kernel);
# the strategy tests of the cluster mode, its configs and the long rows
# (tests/ops/test_kernel_strategies.py); compute-sanitizer memcheck and racecheck over the
# correctness cases under the cluster mode and a shared-memory-starved shape plus the special
# values in one block's piece; then 256x1048576 f32 / bf16 and 64x4194304 f32 softmax, the
# default (online) against Cluster's shapes and torch (scripts/softmax_sweep.py: one line per
# setting, ms and torch/ours). Logs and JSON in $OUT; the essentials on stdout.
set -uo pipefail
OUT=${OUT:-_build/cluster-round}
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

STRATEGIES=tests/ops/test_kernel_strategies.py
# memcheck: every correctness case under the mode (rows of 40000..300000, pieces with a tail,
# inf / NaN / all -inf) and with 2 blocks holding 1 KiB each (runs streamed and read twice),
# the long rows (2^20 + 3: held and streamed parts, heads and tails) at the default shape,
# and the special values each in a single block's piece. racecheck (shared memory, slower):
# the special values at the default shape (all held), 2 blocks x 1 KiB and 16 x none.
MEMCHECK_K="(under_the_override and (softmax-cluster or softmax-config-cluster2-cluster_kib1)) or (long_rows and softmax-cluster)"
RACECHECK_K="special_value_in_one_piece and (softmax-cluster or softmax-config-cluster2-cluster_kib1 or softmax-config-cluster16-cluster_kib0)"
sanitize() {  # sanitize TOOL -k-EXPRESSION
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool "$1" --error-exitcode 99 --print-limit 20 \
    python3 -m pytest $STRATEGIES -q -x --backend nvidia -p no:cacheprovider -k "$2"
}
export STRATEGIES
export -f sanitize

step build 240 bash -c "cmake -S . -B $BUILD -DCAMP_ENABLE_NVIDIA=ON -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH:-90} \
  -DCMAKE_BUILD_TYPE=Release && cmake --build $BUILD -j$(nproc)"
step test-cluster 90 env OPRT_SOFTMAX_STRATEGY=cluster python3 -m pytest tests/ops/test_softmax.py -q --backend nvidia \
  -p no:cacheprovider
step test-strategies 120 python3 -m pytest $STRATEGIES -q --backend nvidia -p no:cacheprovider \
  -k "softmax and (cluster or long_rows or unknown or bad_config)"
step memcheck 120 sanitize memcheck "$MEMCHECK_K"
step racecheck 90 sanitize racecheck "$RACECHECK_K"
step bench 90 python3 scripts/softmax_sweep.py --only softmax-long-f32 softmax-long-bf16 softmax-long4m-f32 \
  --json "$OUT/cluster_sweep.json"
echo "=== failures (tests)"
grep -hE "^(FAILED|ERROR)|Error|error:" "$OUT/test-cluster.log" "$OUT/test-strategies.log" | head -n 25
echo "=== sanitizers"
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race|Hazard|passed|failed" "$OUT/memcheck.log" "$OUT/racecheck.log" | head -n 16
echo "=== bench (ms, GB/s, % of the copy ceiling, torch ms / ours)"
grep -vE "^\s*$" "$OUT/bench.log" | cut -c1-120 | tail -n 45
echo "=== summary"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
! grep -qv ' rc=0 ' "$OUT/summary.txt"
