#!/usr/bin/env python3
"""One launch of each issue-16 goal kernel on the nvidia backend, for ncu to profile:

    ncu -k regex:'softmax_row_groups|softmax_cluster' -c 2 python3 scripts/kernel_goals_once.py

softmax 8192x8192 f16 (the strategy table's Bulk or RowGroups), softmax 256x1048576 f32 (Cluster
on sm_90), reduce_sum 4096x32768 f32 (a block per row),
vector_add 2^28 f32 (tiles), matmul 4096^3 f16 (tensor cores), softmax 131072x256 f32 and
reduce_sum 262144x128 f32 (ShortRows), then over dim 0: softmax 8192x8192 f32 and f16 (column
tiles) and reduce_sum 8192x8192 f32 (packed columns). Inputs are made first, so the only runtime
launches are these ten (plus the column sum's partials kernel).
"""

import torch

import operator_runtime as ort

x16 = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
x_long = torch.randn(256, 1 << 20, device="cuda")
x_sum = torch.randn(4096, 32768, device="cuda")
a, b = torch.randn(1 << 28, device="cuda"), torch.randn(1 << 28, device="cuda")
ma, mb = (torch.randn(4096, 4096, device="cuda", dtype=torch.float16) for _ in range(2))
x_short, x_short_sum = torch.randn(131072, 256, device="cuda"), torch.randn(262144, 128, device="cuda")
x_square = torch.randn(8192, 8192, device="cuda")
torch.cuda.synchronize()
calls = [
    lambda: ort.softmax(x16, -1, backend="nvidia"),
    lambda: ort.softmax(x_long, -1, backend="nvidia"),
    lambda: ort.reduce_sum(x_sum, -1, backend="nvidia"),
    lambda: ort.vector_add(a, b, backend="nvidia"),
    lambda: ort.matmul(ma, mb, backend="nvidia"),
    lambda: ort.softmax(x_short, -1, backend="nvidia"),  # ShortRows
    lambda: ort.reduce_sum(x_short_sum, -1, backend="nvidia"),  # ShortRows
    lambda: ort.softmax(x_square, 0, backend="nvidia"),  # Columns (softmax_columns.cuh)
    lambda: ort.softmax(x16, 0, backend="nvidia"),
    lambda: ort.reduce_sum(x_square, 0, backend="nvidia"),  # Columns, packed
]
for call in calls:
    call()
torch.cuda.synchronize()
print("ran", len(calls), "goal shapes once")
