// What create() learns about an addition, shared by the contract and every backend.
#pragma once

#include "descriptor_registry.h"
#include "tensor_layout.h"
#include "vector_add.h"

namespace oprt {

struct VectorAddDescriptor : Descriptor {
  static constexpr const char* kOp = "vector_add";
  VectorAddDescriptor() : Descriptor(kOp) {}
  oprt_dtype dtype{};
  ElementwisePlan<3> plan{};  // operand 0: out, 1: a, 2: b (both broadcast to out's shape)
  size_t workspace_bytes = 0;
};

}  // namespace oprt
