"""scaled_dot_product_attention: softmax(Q K^T * scale) V per (batch, head), causal and grouped-query forms
(lab 6). Lab shapes are (B, H, S, D): query, key, value and out all (B, H, S, D) (self-attention)."""

import math

import torch
import torch.nn.functional as F

from ..tolerances import ATOL_PER_TERM
from .record import CudaLab, Operator


def _torch(out, query, key, value, **attrs):
    """torch's peer: its own sdpa (no out= form: it allocates)."""
    return F.scaled_dot_product_attention(query, key, value, **attrs)


def _reference(query, key, value, **attrs):
    """torch's sdpa in float64 (its math path: the same top-left causal mask, zeros for Sk = 0). A negative
    scale is passed as the query negated and the scale's size (the same scores): torch 2.13's float64 path
    returned NaN for some causal calls with a negative scale (b1 h2/1 Sq 1 Sk 2 D 1, causal, scale -1.5), where
    the kernels rightly gave a finite result (a property test's fresh draw, 2026-12-08)."""
    scale = attrs.get("scale")
    if scale is not None and scale < 0:
        attrs, query = {**attrs, "scale": -scale}, -query
    return F.scaled_dot_product_attention(query.double(), key.double(), value.double(), **attrs)


# half a unit in the last place of a probability (< 1) stored in the dtype: P V on 16-bit tensor cores
P_ROUNDING = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def _extra_atol(query, key, value, is_causal=False, scale=None, enable_gqa=False, **_):
    """How far f32 accumulation may drift, per output element. A score s_ij = scale * q_i . k_j
    summed in f32 over D is off by up to ~ATOL_PER_TERM * sqrt(D) * scale * |q_i| . |k_j|; an error
    delta_j in the scores moves each probability by p_j (delta_j - sum_k p_k delta_k), so the output
    by at most 2 max_j |delta_j| * sum_j p_j |v_j|. The sums of exp (l) and of p_j v_j over Sk keys
    add ~ATOL_PER_TERM * sqrt(Sk) * sum_j p_j |v_j|, exp itself a few units in the last place. A
    kernel on tensor cores multiplies P rounded to the inputs' 16-bit dtype (FlashAttention does, so
    does the TileLang GPU kernel): half a unit in its last place per probability, times sum_j p_j |v_j|."""
    rounding_p = P_ROUNDING.get(query.dtype, 0.0)
    q, k, v = query.double(), key.double(), value.double()
    if enable_gqa and q.dim() > 2 and k.shape[-3] and q.shape[-3] != k.shape[-3]:
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)
        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], dim=-3)
    d, sk = q.shape[-1], k.shape[-2]
    if sk == 0:  # no keys: out is 0, nothing summed
        return 0.0
    s = (1.0 / math.sqrt(d) if d else 1.0) if scale is None else scale
    scores = s * q @ k.transpose(-2, -1)
    if is_causal:
        seen = torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).tril()  # torch's top-left mask
        scores = scores.masked_fill(~seen, float("-inf"))
    weights = torch.softmax(scores, -1) @ v.abs()  # sum_j p_j |v_j|
    magnitude = (abs(s) * q.abs() @ k.abs().transpose(-2, -1)).amax(-1, keepdim=True)  # max_j scale |q_i| . |k_j|
    allowance = ATOL_PER_TERM * (2 * math.sqrt(d) * magnitude + math.sqrt(sk) + 4) + rounding_p
    return (allowance * weights).nan_to_num(posinf=0)


def visible_pairs(sq: int, sk: int, causal: bool) -> int:
    """(query, key) pairs a call scores: all Sq Sk, or under torch's causal mask (top-left: query i sees
    keys 0..i) sum over i of min(i + 1, Sk)."""
    if not causal:
        return sq * sk
    seen = min(sq, sk)
    return seen * (seen + 1) // 2 + (sq - seen) * sk


def _flops(inputs, is_causal: bool = False, **_) -> int:
    """4 D per scored pair and (batch, head): two products (Q K^T and P V) of 2 D each, as the issue counts
    them (Dv taken as D); a causal call scores about half the pairs, and is counted so (a causal kernel
    counted at the full Sq Sk once looked faster than the GPU's peak, which the timing referee rejects)."""
    q, k = inputs[0], inputs[1]
    return 4 * math.prod(q.shape[:-2]) * visible_pairs(q.shape[-2], k.shape[-2], is_causal) * q.shape[-1]


RECORD = Operator(
    name="scaled_dot_product_attention",
    kind="attention",
    # is_causal, scale, enable_gqa (the C attributes: Python passes torch's default scale 1/sqrt(D) itself)
    contract_attrs=(0, 0.5, 0),
    # around a 2-d shape (R, C): batch R, 2 heads, 3 queries against 5 keys, head dim C
    contract_shapes=lambda s: ((s[0], 2, 3, s[1]), [(s[0], 2, 3, s[1]), (s[0], 2, 5, s[1]), (s[0], 2, 5, s[1])]),
    # one query and key, S past one and two 64-row tiles (65, 130), head dims 16..128, an empty batch
    lab_shapes=((1, 1, 1, 16), (1, 2, 7, 32), (2, 3, 65, 64), (1, 2, 130, 64), (1, 1, 300, 128), (0, 2, 5, 16)),
    bench_shape=(4, 32, 4096, 128),  # the prefill anchor: 4*B*H*S*S*D = 1.1 TFLOP, compute-bound
    input_shapes=lambda s: [s, s, s],
    output_shape=lambda s: s,
    torch_call=_torch,
    reference_call=_reference,
    extra_atol_call=_extra_atol,
    flops_call=_flops,
    flops=lambda s: 4 * s[0] * s[1] * visible_pairs(s[2], s[2], True) * s[3],  # the lab's call is causal
    # one block per (batch * head, 64 query rows); the kernel computes scale = 1/sqrt(d) itself
    cuda=CudaLab(pointers=("q", "k", "v", "o"), sizes=("bh", "s", "d"), empty="bh == 0 || s == 0 || d == 0",
                 launch="dim3 grid((unsigned)((s + 63) / 64), (unsigned)bh);\n"
                        "  scaled_dot_product_attention_kernel<T><<<grid, 128, 0, (cudaStream_t)stream>>>("
                        "(const T*)q, (const T*)k, (const T*)v, (T*)o, bh, s, d);"),
    cuda_sizes=lambda inputs: (inputs[0].shape[0] * inputs[0].shape[1], inputs[0].shape[2], inputs[0].shape[3]),
    # the labs' call (lab 6): causal self-attention, torch's default scale 1/sqrt(D)
    lab_attrs={"is_causal": True},
    # every input large (lab/cases.LARGE_INPUTS): scores ~ 900, past exp's float32 range without the max trick
    special_shape=(1, 2, 33, 16),
    # the judge's words for attention's own mistakes (lab/judge.py: situation -> {language: hint})
    hints={
        "late_rows": {"tilelang": "the rows whose keys fit the first tile are right: when a later tile raises the "
                                  "running max, rescale both the running sum and the output accumulator by "
                                  "exp(m_old - m_new) before adding the tile's terms",
                      "cuda": "the rows whose keys fit the first tile are right: when a later tile raises the "
                              "running max, rescale both the running sum and the output accumulator by "
                              "exp(m_old - m_new) before adding the tile's terms"},
        "early_rows": {"tilelang": "the causal mask is off: query i sees keys 0..i (key j <= i), not i + 1; the last "
                                   "row sees every key whatever the mask, so it alone is right",
                       "cuda": "the causal mask is off: query i sees keys 0..i (key j <= i), not i + 1; the last row "
                               "sees every key whatever the mask, so it alone is right"},
        # a row left NaN summed no keys (0 / 0): the diagonal left out of the mask, a tile loop that stops
        # short of key i, or a running max started at 0 under which every exp underflowed
        "unwritten": {"tilelang": "in attention a NaN row is most often a row that summed no keys (0 / 0): query i "
                                  "sees keys 0..i, key i included (j <= i), so row 0 sees key 0, and the tile loop "
                                  "must reach the tile holding key i (T.ceildiv(i + 1, BLOCK_N) tiles); a running max "
                                  "started at 0 instead of the lowest float can also underflow every exp to 0; and "
                                  "a load of K or V past the last key reads the check's NaN guard (load a key only "
                                  "where t * BLOCK_N + j <= i, inside the mask)",
                      "cuda": "in attention a NaN row is most often a row that summed no keys (0 / 0): query i sees "
                              "keys 0..i, key i included (j <= i), so row 0 sees key 0, and the key loop must reach "
                              "key i; a running max started at 0 instead of -INFINITY can also underflow every expf "
                              "to 0; and a load of K or V past the last key reads the check's NaN guard (load 0 "
                              "for keys >= s)"},
        "past_end": {"tilelang": "a tile of keys rarely ends at seq: load 0 (or skip) for keys >= seq, and never "
                                 "index K or V past the last key",
                     "cuda": "a tile of keys rarely ends at s: load 0 for keys >= s (`key < s ? k[...] : 0`), and "
                             "store only the rows < s"},
        # the fault report's hint for a read past the end of q (cuda_cpu.describe): rows, not keys
        "past_end_read_q": {"tilelang": "index Q only inside its shape: rows below seq and features below dim (a "
                                        "loop to a fixed MAX_D reads the next row's values), and store only the "
                                        "rows < seq",
                            "cuda": "a tile of query rows rarely ends at s: load a query row only where row < s "
                                    "(`row < s ? q[...] : 0`) and its features c < d, and store only the rows < s"},
        "no_scale": {"tilelang": "your output is softmax(Q K^T) V: the scores must be scaled by 1 / sqrt(dim) "
                                 "before the softmax",
                     "cuda": "your output is softmax(Q K^T) V: the scores must be scaled by 1 / sqrt(d) before the "
                             "softmax"},
        "scale_over_d": {"tilelang": "your scores are scaled by 1 / dim: the scale is 1 / sqrt(dim) (in Python, "
                                     "1.0 / math.sqrt(dim), a float the program takes as a constant)",
                         "cuda": "your scores are scaled by 1 / d: the scale is 1 / sqrt(d) (rsqrtf((float)d))"},
        "scale_times_sqrt_d": {"tilelang": "your scores are multiplied by sqrt(dim): the scale divides, 1 / sqrt(dim)",
                               "cuda": "your scores are multiplied by sqrt(d): the scale divides, 1 / sqrt(d) "
                                       "(rsqrtf((float)d))"},
        "not_causal": {"tilelang": "your output is attention without the causal mask: query i may see keys 0..i "
                                   "only (j <= i)",
                       "cuda": "your output is attention without the causal mask: query i may see keys 0..i only "
                               "(j <= i)"},
        "special": {"tilelang": "scores this large overflow exp in float32 (past 88) or underflow it to 0 (0 / 0 is "
                                "NaN): subtract the running max before exp, exp(s - m), and rescale by exp(m_old - "
                                "m_new) when it grows; the running max starts at the lowest float, not 0 (under a "
                                "max of 0 a row of large negative scores underflows every exp)",
                    "cuda": "scores this large overflow expf in float (past 88) or underflow it to 0 (0 / 0 is NaN): "
                            "subtract the running max before expf, expf(s - m), and rescale by expf(m_old - m_new) "
                            "when it grows; the running max starts at -INFINITY, not 0 (under a max of 0 a row of "
                            "large negative scores underflows every expf)"},
    },
    # the mistakes the judge names by recomputing the lab's call another way (hints above)
    # (an entry may be a function of the inputs: a scale that depends on the head dim)
    alternatives={"no_scale": {"scale": 1.0}, "not_causal": {"is_causal": False},
                  "scale_over_d": lambda inputs: {"scale": 1.0 / inputs[0].shape[-1]},
                  "scale_times_sqrt_d": lambda inputs: {"scale": math.sqrt(inputs[0].shape[-1])}},
    # T.gemm on a GPU multiplies float32 tiles as tf32; the GPU kernel takes the 16-bit dtypes (the C target all three)
    lab_dtypes={("cuda", "tilelang"): (torch.float16, torch.bfloat16)},
    # the GPU kernel's own limits (the C target's kernel walks any head dim up to 1024, element by element)
    tilelang_gpu_only=("head dims up to 256",),
    tilelang_dtypes=((torch.float16, torch.bfloat16), "multiplies float16 and bfloat16"),
    # the chapter's steps (ops/scaled_dot_product_attention/steps/): the production kernels' titles, and
    # what scripts/step_bench.py times, in its own shape form (B, H, Sq, Sk, D, is_causal): issue 31's
    # prefill anchor full and causal (1.1 TFLOP, half that causal) and its decode anchor (one query
    # against 8192 keys: memory-bound, 4.3 GB of K and V in bf16)
    production={"cuda": "production: wgmma + TMA on Hopper prefill, else mma.sync (split-KV for decode)",
                "tilelang": "production: T.gemm on fragments under T.Pipelined"},
    step_bench_shapes=((4, 32, 4096, 4096, 128, 0), (4, 32, 4096, 4096, 128, 1), (32, 32, 1, 8192, 128, 0)),
)
