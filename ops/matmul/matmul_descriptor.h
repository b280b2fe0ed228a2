// What create() learns about a matmul, shared by the contract and every backend.
#pragma once

#include "descriptor_registry.h"
#include "matmul.h"
#include "tensor_layout.h"

namespace oprt {

// out[z, i, j] = sum_k a[z, i, k] * b[z, k, j], every operand through its strides (in
// elements). A batch stride of 0 repeats that operand over the batch (a 2-d operand, or a
// batch of 1, broadcast as torch.matmul does); a 2-d call is a batch of one.
struct MatmulPlan {
  int64_t batch = 0, m = 0, n = 0, k = 0;
  int64_t a_batch = 0, a_m = 0, a_k = 0;
  int64_t b_batch = 0, b_k = 0, b_n = 0;
  int64_t o_batch = 0, o_m = 0, o_n = 0;
  bool empty() const { return batch == 0 || m == 0 || n == 0; }
};

struct MatmulDescriptor : Descriptor {
  static constexpr const char* kOp = "matmul";
  MatmulDescriptor() : Descriptor(kOp) {}
  oprt_dtype dtype{};
  MatmulPlan plan{};
  size_t workspace_bytes = 0;
  int backend_variant = 0;  // a backend's own choice, made once by matmul_workspace_bytes
};

// Scratch the backend wants for this plan (bytes); each backend library defines it, and may
// record choices in d.backend_variant (called once, by create).
size_t matmul_workspace_bytes(MatmulDescriptor& d);

}  // namespace oprt
