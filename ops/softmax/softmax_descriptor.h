// What create() learns about a softmax, shared by the contract and every backend.
#pragma once

#include "descriptor_registry.h"
#include "softmax.h"
#include "tensor_layout.h"

namespace oprt {

struct SoftmaxDescriptor : Descriptor {
  static constexpr const char* kOp = "softmax";
  SoftmaxDescriptor() : Descriptor(kOp) {}
  oprt_dtype dtype{};
  RowPlan plan{};
  size_t workspace_bytes = 0;
};

// Scratch the backend wants for this plan (bytes); each backend library defines it.
size_t softmax_workspace_bytes(const SoftmaxDescriptor& d);

}  // namespace oprt
