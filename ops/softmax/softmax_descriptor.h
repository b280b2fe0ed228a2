// What create() learns about a softmax, shared by the contract and every backend.
#pragma once

#include <memory>

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
  // What the backend decided at create, kept for execute (the nvidia backend: its kernels
  // and their launch shapes); empty where it decides nothing.
  std::shared_ptr<const void> backend_plan;
};

// Scratch the backend wants for this plan (bytes); each backend library defines it, and
// may record its decision in d.backend_plan (called once, by create).
size_t softmax_workspace_bytes(SoftmaxDescriptor& d);

}  // namespace oprt
