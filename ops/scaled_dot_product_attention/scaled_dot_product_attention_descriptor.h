// What create() learns about a scaled_dot_product_attention, shared by the contract and every backend.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "descriptor_registry.h"
#include "scaled_dot_product_attention.h"
#include "tensor_layout.h"

namespace oprt {

// Where one operand's (batch, head, sequence, feature) element lies: strides in elements. The
// batch dims are the leading dims, coalesced (size-1 dims dropped, dims merged where all four
// operands step over them as one), so a contiguous or (B, S, H, D)-transposed call has one.
struct AttentionOperand {
  int64_t batch[OPRT_MAX_RANK] = {};
  int64_t head = 0, seq = 0, dim = 0;
};

// out[z, h, i, :] = softmax_j(scale * q[z, h, i, :] . k[z, h / group, j, :]) v[z, h / group, j, :]
// over keys j < key_end(i); z the (linear) batch index.
struct AttentionPlan {
  int64_t batch = 0, heads = 0, kv_heads = 0, group = 1;
  int64_t sq = 0, sk = 0, d = 0, dv = 0;
  int batch_rank = 0;
  int64_t batch_shape[OPRT_MAX_RANK] = {};
  AttentionOperand q, k, v, o;
  int causal = 0;
  float scale = 1.f;

  // Nothing to write: out is empty.
  OPRT_HD bool empty() const { return batch == 0 || heads == 0 || sq == 0 || dv == 0; }
  // The keys query row i sees: [0, key_end(i)). torch's causal mask is top-left aligned
  // (tril(ones(Sq, Sk))): row i sees keys 0..i whatever Sq and Sk are, so every row sees key 0.
  OPRT_HD int64_t key_end(int64_t i) const { return causal && i + 1 < sk ? i + 1 : sk; }
  // The offsets of batch element z in each operand.
  OPRT_HD void batch_offsets(int64_t z, int64_t& qo, int64_t& ko, int64_t& vo, int64_t& oo) const {
    qo = ko = vo = oo = 0;
    for (int d = batch_rank - 1; d >= 0; --d) {
      const int64_t c = d == 0 ? z : z % batch_shape[d];
      if (d) z /= batch_shape[d];
      qo += c * q.batch[d], ko += c * k.batch[d], vo += c * v.batch[d], oo += c * o.batch[d];
    }
  }
};

struct AttentionDescriptor : Descriptor {
  static constexpr const char* kOp = "scaled_dot_product_attention";
  AttentionDescriptor() : Descriptor(kOp) {}
  oprt_dtype dtype{};
  AttentionPlan plan{};
  size_t workspace_bytes = 0;
  // What the backend decided at create, kept for execute (the nvidia backend: tensor cores or
  // not, and how many key splits); empty where it decides nothing.
  std::shared_ptr<const void> backend_plan;
};

// Scratch the backend wants for this plan (bytes); each backend library defines it (called once,
// by create), and may refuse there what its kernels do not express (OPRT_STATUS_NOT_SUPPORTED).
size_t scaled_dot_product_attention_workspace_bytes(AttentionDescriptor& d);

// execute()'s buffer checks, the same on every backend: with Sk = 0 nothing is read, with D = 0
// query and key are empty (scores are 0): either may have no storage. True when value is read.
inline bool require_attention_buffers(const AttentionPlan& p, const void* out, const void* query, const void* key,
                                      const void* value) {
  const bool reads_qk = p.sk > 0 && p.d > 0, reads_v = p.sk > 0;
  require_buffers({{out, "out", true}, {query, "query", reads_qk}, {key, "key", reads_qk}, {value, "value", reads_v}});
  return reads_v;
}

}  // namespace oprt
