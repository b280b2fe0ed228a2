"""scaled_dot_product_attention: torch's sdpa(query, key, value, is_causal=, scale=, enable_gqa=), f32 accumulation.

Sizes are chosen against the kernels' tiles (CPU: 32 query rows, 64 keys a block; CUDA and TileLang on a
GPU: 64 query rows, 32 / 64 keys a tile; Hopper's wgmma kernel 128 rows, 128 keys): one query and one key, Sq and Sk of 65 and 127 (tails past
one and two tiles), Sq != Sk both ways, causal square and non-square (torch's mask is top-left aligned:
query i sees keys 0..i whatever Sq and Sk are), decode (Sq of 1..16 against 1000+ keys), grouped-query
and multi-query heads, head dims 1, 13, 64, 72, 128 and 320 (past the GPU kernels' 256), Dv != D, batch 1
and 3, ranks 2, 3 and 5, strided, transposed, offset and expanded views, and the empty cases torch
defines (Sk = 0 gives zeros; D = 0 the mean of value). Small enough for the CPU suite: the large
shapes are the benchmark's. The (B, S, H, D).transpose(1, 2) layout of most callers is
tests/runtime/ops/test_scaled_dot_product_attention.py's (TensorSpec has no such view).
"""

import torch

from .spec import BenchCase, Case, ErrorCase, T, common_error_cases

API, PREPARE = "scaled_dot_product_attention", "prepare_scaled_dot_product_attention"

# What the tilelang backend refuses on the GPU only (the C target's kernel takes head dims up to 1024)
HEAD_DIM = "head dims up to 256"


def qkv(b, h, sq, sk, d, dv=None, hkv=None, layout="contiguous", values="normal"):
    """query (b, h, sq, d), key (b, hkv, sk, d), value (b, hkv, sk, dv)."""
    dv = d if dv is None else dv
    hkv = h if hkv is None else hkv
    return (T((b, h, sq, d), layout=layout, values=values), T((b, hkv, sk, d), layout=layout),
            T((b, hkv, sk, dv), layout=layout))


CAUSAL, GQA = {"is_causal": True}, {"enable_gqa": True}


def correctness_cases():
    return [
        Case("one-query-one-key", qkv(1, 1, 1, 1, 16)),
        Case("head-dim-1", qkv(1, 1, 1, 1, 1)),
        Case("square-65", qkv(2, 2, 65, 65, 64)),
        Case("square-127-causal", qkv(1, 2, 127, 127, 64), CAUSAL),
        Case("sq-65-sk-127", qkv(1, 2, 65, 127, 64)),
        Case("sq-127-sk-65", qkv(1, 2, 127, 65, 32)),
        # top-left causal: with Sq > Sk the last rows see every key; with Sq < Sk no row sees the last keys
        Case("causal-sq-127-sk-65", qkv(1, 2, 127, 65, 32), CAUSAL),
        Case("causal-sq-65-sk-127", qkv(1, 2, 65, 127, 32), CAUSAL),
        Case("causal-sq-100-sk-3", qkv(1, 1, 100, 3, 16), CAUSAL),
        Case("causal-many-blocks", qkv(1, 1, 300, 300, 16), CAUSAL),
        # decode: a few queries against a long KV cache
        Case("decode-1", qkv(2, 4, 1, 1031, 128)),
        Case("decode-16", qkv(1, 2, 16, 1000, 64)),
        Case("decode-16-causal", qkv(1, 2, 16, 1000, 64), CAUSAL),
        # the CUDA-core kernel's key splits (head dims no tensor-core kernel takes), a tail in the last split
        Case("decode-odd-head-dims", qkv(1, 3, 2, 1500, 72, dv=40)),
        # grouped-query (head h reads key/value head h // (H // Hkv)) and multi-query heads
        Case("gqa-8-2", qkv(3, 8, 2, 65, 70, 64, hkv=2), GQA),
        Case("gqa-8-2-causal", qkv(1, 8, 33, 33, 64, hkv=2), {**CAUSAL, **GQA}),
        Case("gqa-decode", qkv(1, 8, 3, 1003, 128, hkv=2), GQA),
        Case("mqa", qkv(2, 4, 9, 17, 32, hkv=1), GQA),
        Case("gqa-equal-heads", qkv(1, 2, 5, 7, 16), GQA),
        # head dims: the usual 64 and 128, 72 and 13 (no power of two), 320 (past the GPU kernels'), Dv != D
        Case("head-dim-128", qkv(1, 2, 70, 129, 128)),
        # the Hopper kernel's tiles (128 query rows, 128 keys): several of each with tails, causal
        # with Sq != Sk, and grouped-query rows packed across a head's end inside a tile
        Case("tiles-128-causal", qkv(1, 2, 333, 333, 128), CAUSAL),
        Case("tiles-64-causal-sq-200-sk-390", qkv(2, 2, 200, 390, 64), CAUSAL),
        Case("tiles-gqa-causal", qkv(1, 8, 150, 260, 128, hkv=2), {**CAUSAL, **GQA}),
        # the Hopper kernel's tensor maps on their edges: one KV head, one key, rank 3 (no batch dim)
        Case("tiles-mqa-causal", qkv(2, 4, 130, 150, 64, hkv=1), {**CAUSAL, **GQA}),
        Case("tiles-one-key", qkv(1, 2, 130, 1, 64)),
        Case("tiles-rank-3", (T((4, 140, 64)), T((4, 150, 64)), T((4, 150, 64))), CAUSAL),
        # two batch dims that do not merge (key and value repeat over the second): no TMA map
        # describes them, so the Hopper kernel hands the call back to the mma.sync kernel
        Case("batch-dims-expanded-kv",
             (T((2, 3, 2, 130, 64)), T((2, 3, 2, 140, 64), layout="expanded", expand_from=(2, 1, 2, 140, 64)),
              T((2, 3, 2, 140, 64), layout="expanded", expand_from=(2, 1, 2, 140, 64))), CAUSAL),
        Case("head-dim-72", qkv(1, 2, 65, 65, 72), CAUSAL),
        # the mma.sync kernel's padded head-dim tiles (D = 8 on 32, 40 on 64, 80 and 96 on 96): several
        # key tiles, causal, grouped-query decode with key splits
        Case("head-dim-8", qkv(2, 2, 70, 150, 8)),
        Case("head-dim-40-decode", qkv(2, 4, 1, 2000, 40)),
        Case("head-dim-80-gqa-decode", qkv(1, 8, 2, 3001, 80, hkv=2), GQA),
        Case("head-dim-96-causal", qkv(1, 2, 200, 333, 96), CAUSAL),
        Case("head-dim-13-dv-7", qkv(2, 1, 19, 23, 13, dv=7)),
        Case("dv-32-d-64", qkv(1, 2, 33, 40, 64, dv=32)),
        Case("dv-128-d-64", qkv(1, 2, 33, 40, 64, dv=128), CAUSAL),
        Case("head-dim-320", qkv(1, 1, 9, 40, 320, dv=64), tilelang=HEAD_DIM),
        Case("batch-3", qkv(3, 2, 17, 17, 32)),
        Case("scale", qkv(1, 2, 17, 29, 32), {"scale": 0.3}),
        Case("scale-causal-gqa", qkv(2, 4, 17, 29, 32, hkv=2), {"scale": 1.7, **CAUSAL, **GQA}),
        # a scale the dense GPU program (D = Dv = 64 or 128, contiguous) leaves to the general one: it takes each
        # row's max before scaling, right for a positive scale only (no causal mask here, nor a negative scale:
        # torch's math path multiplies q and k by the scale's square root and gives NaN for those)
        Case("zero-scale-dense", qkv(1, 2, 33, 40, 128), {"scale": 0.0}),
        # large queries: scores of ~1e4, whose exp overflows unless each row's max is subtracted
        Case("large-scores", qkv(1, 2, 40, 70, 16, values="large")),
        # NaN and +-inf in the queries: their rows are NaN in torch (a guard "sum > 0" once made them 0)
        Case("nan-inf-queries", qkv(1, 2, 20, 37, 16, values="extreme"), CAUSAL),
        # other ranks: (S, D), (H, S, D) and two batch dims
        Case("rank-2", (T((9, 16)), T((11, 16)), T((11, 8)))),
        Case("rank-3", (T((4, 33, 16)), T((4, 20, 16)), T((4, 20, 16))), CAUSAL),
        Case("rank-5", (T((2, 3, 2, 17, 16)), T((2, 3, 2, 9, 16)), T((2, 3, 2, 9, 16)))),
        # views: every dim reversed in memory, every other feature, one element past the storage's start,
        # key and value heads repeated with stride 0
        Case("transposed", qkv(2, 2, 33, 40, 16, layout="transposed")),
        Case("strided", qkv(1, 2, 40, 33, 64, layout="strided"), CAUSAL),
        Case("offset", qkv(1, 3, 21, 21, 24, layout="offset")),
        # a head dim the tensor-core kernel takes, on bases off 16 bytes: execute falls back to CUDA cores
        Case("offset-64", qkv(1, 2, 33, 40, 64, layout="offset"), CAUSAL),
        Case("expanded-kv", (T((2, 4, 9, 16)), T((2, 4, 13, 16), layout="expanded", expand_from=(2, 1, 13, 16)),
                             T((2, 4, 13, 8), layout="expanded", expand_from=(2, 1, 13, 8)))),
        # what torch defines for empty operands
        Case("no-keys", qkv(2, 2, 3, 0, 8, dv=5)),
        Case("no-keys-causal", qkv(1, 2, 3, 0, 8), CAUSAL),
        Case("no-queries", qkv(1, 2, 0, 5, 8)),
        Case("empty-batch", qkv(0, 2, 3, 5, 8)),
        Case("head-dim-0", qkv(1, 2, 4, 6, 0, dv=3), CAUSAL),
        Case("dv-0", qkv(1, 2, 4, 6, 8, dv=0)),
    ]


def api_error_cases():
    valid = qkv(1, 2, 3, 5, 8)
    return common_error_cases(valid, {}, "query") + [
        ErrorCase("key-not-a-tensor", (T((1, 2, 3, 8)), 2.0, T((1, 2, 5, 8))), {}, TypeError,
                  "key must be a torch.Tensor"),
        ErrorCase("attn-mask", valid, {"attn_mask": torch.ones(3, 5, dtype=torch.bool)}, NotImplementedError,
                  "attn_mask is not implemented"),
        ErrorCase("dropout", valid, {"dropout_p": 0.1}, NotImplementedError, "dropout_p=0.1 is not implemented"),
        ErrorCase("query-1d", (T((8,)), T((5, 8)), T((5, 8))), {}, ValueError, "query has 1 dims"),
        ErrorCase("key-rank", (T((1, 2, 3, 8)), T((2, 5, 8)), T((1, 2, 5, 8))), {}, ValueError,
                  "key has 3 dims .* but query has 4"),
        ErrorCase("batch", qkv(1, 2, 3, 5, 8)[:1] + (T((2, 2, 5, 8)), T((2, 2, 5, 8))), {}, ValueError,
                  r"key's batch dims \(2,\) differ from query's \(1,\)"),
        ErrorCase("heads", qkv(1, 4, 3, 5, 8, hkv=2), {}, ValueError,
                  r"key has 2 heads \(dim -3\) but query has 4.*enable_gqa"),
        ErrorCase("gqa-not-a-multiple", qkv(1, 4, 3, 5, 8, hkv=3), GQA, ValueError,
                  "enable_gqa: query's 4 heads .* not a multiple of key's 3"),
        ErrorCase("value-heads", (T((1, 4, 3, 8)), T((1, 2, 5, 8)), T((1, 4, 5, 8))), GQA, ValueError,
                  r"value has 4 heads \(dim -3\) but key has 2"),
        ErrorCase("head-dim", (T((1, 2, 3, 8)), T((1, 2, 5, 7)), T((1, 2, 5, 8))), {}, ValueError,
                  r"key's head dim \(last, 7\) must equal query's \(8\)"),
        ErrorCase("value-length", (T((1, 2, 3, 8)), T((1, 2, 5, 8)), T((1, 2, 6, 8))), {}, ValueError,
                  r"value's sequence length \(dim -2, 6\) must equal key's \(5\)"),
        ErrorCase("is-causal-not-bool", valid, {"is_causal": 1}, TypeError, "is_causal must be a bool"),
        ErrorCase("enable-gqa-not-bool", valid, {"enable_gqa": "yes"}, TypeError, "enable_gqa must be a bool"),
        ErrorCase("scale-inf", valid, {"scale": float("inf")}, ValueError, "scale=inf must be finite"),
        ErrorCase("scale-not-a-number", valid, {"scale": "1/8"}, TypeError, "scale must be a float"),
        ErrorCase("out-wrong-shape", valid, {}, ValueError, "out has shape", out=T((1, 2, 3, 5))),
    ]


def benchmark_cases():
    """Shapes (B, H, Sq, Sk, D[, Hkv]) (tests/bench/scaled_dot_product_attention.py draws them). On a GPU the
    issue's anchors: prefill f16/bf16, full and causal (compute-bound), and decode against an 8192-long KV
    cache (memory-bound: K and V read once), plus grouped-query decode. On the CPU only the small ones run
    (the harness skips shapes past 2^24 B*H*Sq*Sk*D there). The first case has no attrs: the harness's
    host-overhead row reuses the first case's attribute names."""
    halves = (torch.float16, torch.bfloat16)
    prefill = [BenchCase(s, dtype, attrs) for s in ((4, 32, 4096, 4096, 128),) for dtype in halves
               for attrs in ({}, {"is_causal": True})]
    prefill += [BenchCase(s, dtype) for s in ((1, 32, 16384, 16384, 128), (8, 16, 4096, 4096, 64),
                                              (16, 16, 1024, 1024, 128)) for dtype in halves]
    decode = [BenchCase((32, 32, 1, 8192, 128), dtype) for dtype in halves]
    decode += [BenchCase((32, 32, 16, 8192, 128, 8), torch.bfloat16, {"enable_gqa": True})]
    small = [BenchCase((1, 4, 128, 128, 64)), BenchCase((1, 8, 256, 256, 64), attrs={"is_causal": True}),
             BenchCase((4, 8, 1, 2048, 64)), BenchCase((1, 4, 256, 256, 64), torch.bfloat16)]
    return small + prefill + decode
