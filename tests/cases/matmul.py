"""matmul: a @ b (torch.matmul) for 2-d and batched 3-d operands, f32 accumulation.

Shapes are chosen per backend path as well as per awkward size: sizes 1, 7, 127 and 1000; K = 0
and empty M / N; tiles with tails in M, N and K (200 x 136 x 264 against 128 x 128 x 32 tiles);
each of the four row- / column-major combinations with leading dims that are multiples of 8
(the CUDA tensor-core path loads them 16 bytes at a time) and ones that are not, or are strided
(the CUDA-core path); batches, broadcast batches, and a K long enough to test accumulation.
"""

import torch

from .spec import Case, BenchCase, ErrorCase, T, common_error_cases

API, PREPARE = "matmul", "prepare_matmul"

# What the tilelang backend refuses: on the GPU, K = 0 (and float32: cases/spec.py TILELANG_DTYPES). Every
# layout its program does not read as it is (transposed, offset, K or N not multiples of 8, broadcast
# batches) is staged through copies it can (operator_runtime/_internal/tilelang_staging.py).
K_ZERO = "needs K >= 1"


def correctness_cases():
    return [
        Case("1x1x1", (T((1, 1)), T((1, 1)))),
        Case("7x7x7", (T((7, 7)), T((7, 7)))),
        Case("127x127x127", (T((127, 127)), T((127, 127)))),
        Case("1000x127x1000", (T((1000, 127)), T((127, 1000)))),
        Case("k1000", (T((7, 1000)), T((1000, 127)))),
        Case("gemv-row", (T((1, 1000)), T((1000, 64)))),
        Case("k-zero", (T((5, 0)), T((0, 6))), tilelang=K_ZERO),
        Case("k-zero-batched", (T((2, 3, 0)), T((2, 0, 4))), tilelang=K_ZERO),
        Case("empty-m", (T((0, 8)), T((8, 16)))),
        Case("empty-n", (T((5, 8)), T((8, 0)))),
        Case("empty-batch", (T((0, 5, 8)), T((0, 8, 16)))),
        # Tails in all three dims of 128 x 128 x 32 tiles; leading dims multiples of 8.
        Case("tiles-with-tails", (T((200, 264)), T((264, 136)))),
        Case("a-transposed", (T((200, 264), layout="transposed"), T((264, 136)))),
        Case("b-transposed", (T((200, 264)), T((264, 136), layout="transposed"))),
        Case("both-transposed", (T((136, 72), layout="transposed"), T((72, 40), layout="transposed"))),
        # Outputs of the CUDA backend's 128 x 256 tiles (M, N >= 1024), with tails in M, N and K;
        # row-major and batched, and both operands column-major.
        Case("wide-tiles-batched", (T((2, 1032, 40)), T((2, 40, 1032)))),
        Case("wide-tiles-transposed", (T((1032, 40), layout="transposed"), T((40, 1032), layout="transposed"))),
        # Leading dims that are not multiples of 8, and strided rows: no 16-byte loads.
        Case("odd-leading-dims", (T((33, 65)), T((65, 17)))),
        Case("odd-transposed", (T((33, 65), layout="transposed"), T((65, 17), layout="transposed"))),
        Case("strided", (T((9, 31), layout="strided"), T((31, 5), layout="strided"))),
        Case("batched", (T((3, 37, 29)), T((3, 29, 41)))),
        Case("batched-aligned", (T((2, 136, 72)), T((2, 72, 40)))),
        Case("batched-transposed", (T((2, 136, 72), layout="transposed"), T((2, 72, 40)))),
        Case("batch-broadcast-2d-a", (T((37, 24)), T((4, 24, 16)))),
        Case("batch-broadcast-2d-b", (T((4, 37, 24)), T((24, 16)))),  # folded: one (148, 24) @ (24, 16)
        Case("batch-broadcast-2d-b-transposed", (T((4, 37, 24), layout="transposed"), T((24, 16)))),  # no fold: batched
        Case("batch-of-one", (T((1, 16, 24)), T((5, 24, 8)))),
        Case("batch-expanded", (T((4, 16, 24), layout="expanded", expand_from=(1, 16, 24)), T((4, 24, 8)))),
        # Accumulation over a long K: with 16-byte loads (K a multiple of 8 with a tail of 24 past the last 32), and without.
        Case("large-k", (T((4, 65560)), T((65560, 8)))),
        Case("large-k-odd", (T((3, 100_003)), T((100_003, 2)))),
        # The CUDA backend's skinny kernel (at most 8 rows or 8 columns): B with N contiguous and K split
        # over blocks; B with K contiguous, rows 16-byte aligned (K = 4104) and not (4100); a tall output
        # of 3 columns (transposed to 3 rows); a batch; an operand 2 bytes off a 16-byte boundary.
        Case("skinny-split-n-contiguous", (T((3, 4100)), T((4100, 300)))),
        Case("skinny-split-k-contiguous", (T((5, 4104)), T((4104, 72), layout="transposed"))),
        Case("skinny-k-contiguous-unaligned", (T((8, 4100)), T((4100, 40), layout="transposed"))),
        Case("skinny-tall", (T((2000, 1030)), T((1030, 3)))),
        Case("skinny-batched", (T((3, 2, 600)), T((3, 600, 40)))),
        # Few output tiles and a long K: split over blocks (the CUDA-core kernel's f32, the wgmma kernel's 16-bit).
        Case("split-k-few-tiles", (T((45, 2000)), T((2000, 100)))),
        Case("skinny-offset", (T((6, 1000), layout="offset"), T((1000, 264), layout="offset"))),
        Case("extreme-values", (T((6, 40), values="extreme"), T((40, 8), values="extreme"))),
        # torch.matmul's other forms (PyTorch's OpInfo samples): vectors on either side, N-d batches that
        # broadcast; viewed as the kernels' 2-d and 3-d operands (ops/matmul.py)
        Case("vector-dot", (T((20,)), T((20,)))),
        Case("matrix-vector", (T((5, 10)), T((10,)))),
        Case("vector-matrix", (T((10,)), T((10, 5)))),
        Case("batched-vector", (T((5, 5, 10)), T((10,)))),
        Case("vector-batched", (T((10,)), T((5, 10, 5)))),
        Case("4d-batches", (T((3, 2, 16, 24)), T((3, 2, 24, 8)))),
        Case("4d-vector", (T((3, 2, 16, 24)), T((24,)))),
        Case("4d-matrix", (T((3, 2, 16, 24)), T((24, 8)))),
        Case("4d-broadcast-batches", (T((2, 1, 16, 24)), T((3, 24, 8)))),  # both copied to one batch of 6
        # shapes a fuzzer drew that went wrong: a batch that cannot be viewed as one dim (copied, then
        # foldable: it was mapped twice and crashed), b's batch of ones that adds leading dims to the
        # result (they were dropped), empty dims under broadcast batches (a raw reshape error)
        Case("4d-strided-times-matrix", (T((2, 3, 5, 24), layout="strided"), T((24, 8)))),
        # (copied: a batch of 6 against b's one)
        Case("4d-expanded-times-vector", (T((3, 2, 5, 24), layout="expanded", expand_from=(1, 2, 1, 24)), T((24,)))),
        Case("b-batch-of-ones", (T((3, 5, 24)), T((1, 1, 24, 8)))),
        Case("empty-n-broadcast", (T((3, 22, 12)), T((2, 1, 12, 0)))),  # K = 12
        Case("k-zero-broadcast", (T((5, 0)), T((2, 3, 0, 4))), tilelang=K_ZERO),
    ]


def api_error_cases():
    return common_error_cases((T((4, 6)), T((6, 5))), {}, "a") + [
        ErrorCase("b-not-a-tensor", (T((4, 6)), 2.0), {}, TypeError, "b must be a torch.Tensor"),
        ErrorCase("inner-dims", (T((4, 6)), T((5, 6))), {}, ValueError, r"do not multiply: a's last dim \(K=6\)"),
        ErrorCase("a-0d", (T(()), T((6, 5))), {}, ValueError, "a is 0-d"),
        ErrorCase("vector-k", (T((4, 6)), T((5,))), {}, ValueError, r"do not multiply: a's last dim \(K=6\)"),
        ErrorCase("batch-dims", (T((2, 3, 4, 6)), T((4, 6, 5))), {}, ValueError, "batch dims .* do not broadcast"),
        ErrorCase("batches", (T((2, 4, 6)), T((3, 6, 5))), {}, ValueError, "batches 2 and 3 that do not broadcast"),
        ErrorCase("out-wrong-shape", (T((4, 6)), T((6, 5))), {}, ValueError, "out has shape", out=T((5, 4))),
    ]


def benchmark_cases():
    """Shapes (M, N, K). On a GPU: square f16/bf16 (compute-bound; the issue's goals), skinny M with
    N = K = 8192 (decode-time GEMV-like, memory-bound), f32 on CUDA cores. On the CPU only the
    small ones run (the harness skips shapes past 2^24 M*N*K there)."""
    halves = (torch.float16, torch.bfloat16)
    square = [BenchCase((n, n, n), dtype) for n in (4096, 8192) for dtype in halves]
    skinny = [BenchCase((m, 8192, 8192), dtype) for m in (16, 32, 64, 128) for dtype in halves]
    small = [BenchCase((256, 256, 256)), BenchCase((64, 1024, 256)), BenchCase((256, 256, 256), torch.bfloat16)]
    return square + skinny + small + [BenchCase((4096, 4096, 4096))]
