"""copy: out.copy_(input), any input strides, broadcasting, dtype conversion."""

import torch

from .spec import Case, BenchCase, ErrorCase, T, common_error_cases

API, PREPARE = "copy", "prepare_copy"


def correctness_cases():
    return [
        Case("scalar", (T(()),)),
        Case("one", (T((1,)),)),
        Case("odd", (T((7,)),)),
        Case("not-multiple-of-8", (T((1023,)),)),
        Case("long-odd", (T((100_003,)),)),
        Case("unaligned", (T((3 * 4096 + 5,), layout="offset"),)),
        Case("empty", (T((0,)),)),
        Case("empty-middle", (T((3, 0, 5)),)),
        Case("2d", (T((33, 65)),)),
        Case("transposed", (T((17, 29), layout="transposed"),)),
        Case("transposed-3d", (T((5, 6, 7), layout="transposed"),)),
        Case("strided", (T((9, 31), layout="strided"),)),
        Case("expanded", (T((11, 13), layout="expanded", expand_from=(1, 13)),)),
        Case("extreme-values", (T((4, 37), values="extreme"),)),
        Case("to-f32", (T((5, 37), layout="transposed"),), {"dtype": torch.float32}),
        Case("to-f16", (T((5, 37)),), {"dtype": torch.float16}),
        Case("to-bf16", (T((1031,), values="extreme"),), {"dtype": torch.bfloat16}),
    ]


def api_error_cases():
    return common_error_cases((T((4, 5)),), {}, "input", out_dtype_fixed=False) + [
        ErrorCase("no-broadcast", (T((4, 5)),), {}, ValueError, "cannot broadcast to out's shape", out=T((4, 6))),
        ErrorCase("dtype-disagrees-with-out", (T((4, 5)),), {"dtype": torch.float16}, TypeError,
                  "dtype=torch.float16 disagrees with out", out=T((4, 5))),
        ErrorCase("dtype-unsupported", (T((4, 5)),), {"dtype": torch.float64}, TypeError,
                  "dtype=torch.float64 is not supported"),  # (it once said "out has dtype": no out was passed)
    ]


def benchmark_cases():
    return [BenchCase((n,)) for n in (1 << 20, 1 << 24, 1 << 28)]
