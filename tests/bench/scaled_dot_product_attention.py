"""scaled_dot_product_attention benchmark: BenchCase shapes are (B, H, Sq, Sk, D), or (B, H, Sq, Sk, D, Hkv)
for grouped-query attention (enable_gqa in the case's attrs), drawn here as query (B, H, Sq, D) and key and
value (B, Hkv, Sk, D), contiguous; FLOPs: the record's 4 D per scored (query, key) pair and (batch, head): 4 B H Sq Sk D, about half that for a causal call.

Prefill (Sq = Sk in the thousands) is compute-bound; decode (Sq of 1..16 against a long KV cache) reads
K and V once and is memory-bound: its rows' GB/s are those of K and V (query and out are small).
"""

import torch
import torch.nn.functional as F

TINY_SHAPE = (1, 1, 8, 8, 8)  # host overhead: the call path, not the kernel


def make_inputs(shape, dtype, device, gen) -> list[torch.Tensor]:
    b, h, sq, sk, d, *rest = shape
    hkv = rest[0] if rest else h
    draw = lambda *s: torch.randn(s, generator=gen).to(device=device, dtype=dtype)  # noqa: E731
    return [draw(b, h, sq, d), draw(b, hkv, sk, d), draw(b, hkv, sk, d)]


def row_shape(inputs) -> list[int]:
    q, k, _ = inputs
    b, h, sq, d = q.shape
    return [b, h, sq, k.shape[-2], d] + ([k.shape[1]] if k.shape[1] != h else [])  # (B, H, Sq, Sk, D[, Hkv])


def torch_peers(out, inputs, attrs) -> dict:
    """sdpa's flash and cuDNN backends, each forced: eager torch picks one by its own priority, and the
    issue's goals are against the faster. CUDA only (the CPU has neither)."""
    if not inputs[0].is_cuda:
        return {}
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def forced(backend):
        def call():
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(*inputs, **attrs)
        return call
    return {"flash": forced(SDPBackend.FLASH_ATTENTION), "cudnn": forced(SDPBackend.CUDNN_ATTENTION)}
