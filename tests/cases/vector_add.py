"""vector_add: a + b with torch broadcasting."""

from .spec import Case, BenchCase, ErrorCase, T, common_error_cases

API, PREPARE = "vector_add", "prepare_vector_add"


def correctness_cases():
    return [
        Case("scalars", (T(()), T(()))),
        Case("one", (T((1,)), T((1,)))),
        Case("odd", (T((7,)), T((7,)))),
        Case("not-multiple-of-8", (T((1023,)), T((1023,)))),
        Case("long-odd", (T((100_003,)), T((100_003,)))),
        Case("empty", (T((0,)), T((0,)))),
        Case("scalar-plus-vector", (T(()), T((4097,)))),
        Case("broadcast-both", (T((5, 1, 7)), T((3, 1)))),
        Case("broadcast-row", (T((33, 65)), T((65,)))),
        # along rows (the nvidia rows kernel): a bias row in whole packs, rows longer than a block,
        # a column vector, rows starting off a 16-byte boundary, many rows shorter than a pack
        Case("bias-rows", (T((64, 1024)), T((1024,)))),
        Case("bias-long-rows", (T((3, 70_001)), T((70_001,)))),
        Case("column-vector", (T((37, 513)), T((37, 1)))),
        Case("offset-plus-row", (T((9, 100), layout="offset"), T((100,)))),
        Case("many-short-rows", (T((4099, 3)), T((3,)))),
        Case("empty-broadcast", (T((0, 3)), T((1, 3)))),
        Case("transposed", (T((17, 29), layout="transposed"), T((17, 29)))),
        Case("strided", (T((9, 31), layout="strided"), T((9, 31), layout="transposed"))),
        Case("expanded", (T((11, 13), layout="expanded", expand_from=(11, 1)), T((11, 13)))),
        Case("extreme-values", (T((4, 37), values="extreme"), T((4, 37), values="extreme"))),
    ]


def api_error_cases():
    return common_error_cases((T((4, 5)), T((4, 5))), {}, "a") + [
        ErrorCase("b-not-a-tensor", (T((4, 5)), 2.0), {}, TypeError, "b must be a torch.Tensor"),
        ErrorCase("no-broadcast", (T((4, 5)), T((3,))), {}, ValueError, "do not broadcast"),
        ErrorCase("out-wrong-shape", (T((4, 5)), T((4, 5))), {}, ValueError, "out has shape", out=T((5, 4))),
    ]


def benchmark_cases():
    return [BenchCase((n,), inputs=2) for n in (1 << 20, 1 << 24, 1 << 28)]
