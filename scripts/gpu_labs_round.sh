set -uo pipefail
BUDGET=175
source scripts/gpu_lib.sh
cap labs-a 170 $PY --nbval labs/01_copy.ipynb labs/02_vector_add.ipynb &
cap labs-b 170 $PY --nbval labs/03_reduce_sum.ipynb labs/04_softmax.ipynb &
cap mistakes 170 $PY tests/test_lab_mistakes.py -k "not matmul" -x &
wait
for t in labs-a labs-b mistakes; do show $t "^(FAILED|ERROR)|Error|passed|failed" 12; done
cat "$OUT/summary.txt"
