// What create() learns about a copy, shared by the contract and every backend.
#pragma once

#include "copy.h"
#include "descriptor_registry.h"
#include "tensor_layout.h"

namespace oprt {

struct CopyDescriptor : Descriptor {
  static constexpr const char* kOp = "copy";
  CopyDescriptor() : Descriptor(kOp) {}
  oprt_dtype out_dtype{}, in_dtype{};
  ElementwisePlan<2> plan{};  // operand 0: out, 1: in (broadcast to out's shape)
  size_t workspace_bytes = 0;
};

}  // namespace oprt
