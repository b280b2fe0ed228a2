"""scaled_dot_product_attention: ``torch.nn.functional.scaled_dot_product_attention`` without attn_mask or
dropout: softmax(query @ key^T * scale) @ value, causal and grouped-query forms, accumulated in f32.

torch's causal mask, checked on torch 2.13.0: ``is_causal=True`` gives exactly ``attn_mask=tril(ones(Sq, Sk))``,
the top-left aligned mask (query i sees keys 0..i), also when Sq != Sk; not the bottom-right alignment
``tril(ones(Sq, Sk), Sk - Sq)`` that issue 31's text assumed. So no query row is ever fully masked while
Sk >= 1 (row 0 sees key 0; with Sq > Sk the rows past Sk see every key), and the runtime needs no NaN rule
for such rows. With Sk = 0 torch returns zeros (not NaN) in float64, float32, float16 and bfloat16, and
with D = 0 the mean of value (every score is 0): the runtime does the same.
"""

from __future__ import annotations

import ctypes
import math

import torch

from .._internal import OpSignature, PreparedOp, bind_prepared, checks, run_eager

OP = "scaled_dot_product_attention"
# C attributes after the views: is_causal (0/1), scale (finite), enable_gqa (0/1)
SIGNATURE = OpSignature(OP, inputs=("query", "key", "value"), attrs=(ctypes.c_int32, ctypes.c_double, ctypes.c_int32),
                        tilelang="attention")


def scaled_dot_product_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False, *, scale: float | None = None,
                                 enable_gqa: bool = False, out: torch.Tensor | None = None,
                                 backend: str | None = None) -> torch.Tensor:
    """torch's ``scaled_dot_product_attention(query, key, value, is_causal=, scale=, enable_gqa=)``.

    query (..., H, Sq, D), key (..., Hkv, Sk, D), value (..., Hkv, Sk, Dv) -> (..., H, Sq, Dv), one
    dtype and rank (>= 2; the dims before the last three are batch dims, equal in all three). scale
    defaults to 1/sqrt(D). is_causal masks as torch does: query i sees keys 0..i (top-left aligned,
    also when Sq != Sk). enable_gqa: H a multiple of Hkv, query head h reads key/value head
    h // (H // Hkv). attn_mask and dropout_p are not implemented (NotImplementedError)."""
    _refuse_unimplemented(attn_mask, dropout_p)
    if out is None:  # (with out given, the checks run once per layout: see plan_cache._key)
        query, key, value = _tensors(query, key, value)
        out = torch.empty(_result_shape(query, key, value, enable_gqa), dtype=query.dtype, device=query.device)
    return run_eager(SIGNATURE, out, (query, key, value), (is_causal, scale, enable_gqa), backend, _prepare_positional)


def prepare_scaled_dot_product_attention(out: torch.Tensor, query: torch.Tensor, key: torch.Tensor,
                                         value: torch.Tensor, attn_mask=None, dropout_p: float = 0.0,
                                         is_causal: bool = False, *, scale: float | None = None,
                                         enable_gqa: bool = False, backend: str | None = None) -> PreparedOp:
    _refuse_unimplemented(attn_mask, dropout_p)
    query, key, value = _tensors(query, key, value)
    out = checks.float_tensor(OP, "out", out)
    checks.out_like(OP, out, _result_shape(query, key, value, enable_gqa), query.dtype)
    causal = _flag("is_causal", is_causal)
    gqa = _flag("enable_gqa", enable_gqa)
    return bind_prepared(SIGNATURE, out, {"query": query, "key": key, "value": value},
                         (int(causal), _scale(scale, query.shape[-1]), int(gqa)), backend)


def _prepare_positional(out, query, key, value, is_causal, scale, enable_gqa, *, backend):
    """run_eager's prepare: the attributes come positionally, in SIGNATURE's order."""
    return prepare_scaled_dot_product_attention(out, query, key, value, is_causal=is_causal, scale=scale,
                                                enable_gqa=enable_gqa, backend=backend)


def _refuse_unimplemented(attn_mask, dropout_p) -> None:
    if attn_mask is not None:
        raise NotImplementedError(f"{OP}: attn_mask is not implemented; pass is_causal=True for a causal mask")
    if dropout_p != 0.0:
        raise NotImplementedError(f"{OP}: dropout_p={dropout_p!r} is not implemented (only 0.0: inference)")


def _tensors(query, key, value) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return tuple(checks.float_tensor(OP, name, t) for name, t in (("query", query), ("key", key), ("value", value)))


def _flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{OP}: {name} must be a bool, got {type(value).__name__}")
    return value


def _scale(scale, head_dim: int) -> float:
    """torch's default 1/sqrt(D); with D = 0 every score is 0 whatever the scale (torch: the mean of value)."""
    if scale is None:
        return 1.0 / math.sqrt(head_dim) if head_dim else 1.0
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"{OP}: scale must be a float or None, got {type(scale).__name__}")
    if not math.isfinite(scale):
        raise ValueError(f"{OP}: scale={scale} must be finite")
    return float(scale)


def _result_shape(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, enable_gqa) -> torch.Size:
    """(..., H, Sq, Dv); raises naming the operand that does not fit."""
    if query.dim() < 2:
        raise ValueError(f"{OP}: query has {query.dim()} dims {tuple(query.shape)}; attention takes (..., H, S, D) "
                         f"operands of at least 2 dims")
    for name, t in (("key", key), ("value", value)):
        if t.dim() != query.dim():
            raise ValueError(f"{OP}: {name} has {t.dim()} dims {tuple(t.shape)} but query has {query.dim()} "
                             f"{tuple(query.shape)}; they must match")
    for name, t in (("key", key), ("value", value)):
        if t.dtype != query.dtype:
            raise TypeError(f"{OP}: {name} is {t.dtype} but query is {query.dtype}; convert one so they match")
    for name, t in (("key", key), ("value", value)):
        if t.shape[:-3] != query.shape[:-3]:
            raise ValueError(f"{OP}: {name}'s batch dims {tuple(t.shape[:-3])} differ from query's "
                             f"{tuple(query.shape[:-3])} (no broadcasting)")
    heads = query.shape[-3] if query.dim() > 2 else 1
    kv_heads = key.shape[-3] if key.dim() > 2 else 1
    if (value.shape[-3] if value.dim() > 2 else 1) != kv_heads:
        raise ValueError(f"{OP}: value has {value.shape[-3]} heads (dim -3) but key has {kv_heads}; they must match")
    if not _flag("enable_gqa", enable_gqa) and kv_heads != heads:
        raise ValueError(f"{OP}: key has {kv_heads} heads (dim -3) but query has {heads}; they must match "
                         f"(enable_gqa=True lets query's heads be a multiple of key's)")
    if enable_gqa and (heads % kv_heads if kv_heads else heads):
        raise ValueError(f"{OP}: enable_gqa: query's {heads} heads (dim -3) are not a multiple of key's {kv_heads}")
    if key.shape[-1] != query.shape[-1]:
        raise ValueError(f"{OP}: key's head dim (last, {key.shape[-1]}) must equal query's ({query.shape[-1]})")
    if value.shape[-2] != key.shape[-2]:
        raise ValueError(f"{OP}: value's sequence length (dim -2, {value.shape[-2]}) must equal key's "
                         f"({key.shape[-2]})")
    return torch.Size((*query.shape[:-1], value.shape[-1]))
