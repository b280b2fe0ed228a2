// What create() learns about a sum, shared by the contract and every backend.
#pragma once

#include <memory>

#include "descriptor_registry.h"
#include "reduce_sum.h"
#include "tensor_layout.h"

namespace oprt {

struct ReduceSumDescriptor : Descriptor {
  static constexpr const char* kOp = "reduce_sum";
  ReduceSumDescriptor() : Descriptor(kOp) {}
  oprt_dtype dtype{};
  RowPlan plan{};  // one row per output element; out_row_stride is 0
  size_t workspace_bytes = 0;
  // What the backend decided at create, kept for execute (the nvidia backend: its kernel
  // and launch shape); empty where it decides nothing.
  std::shared_ptr<const void> backend_plan;
};

// Scratch the backend wants for this plan (bytes); each backend library defines it, and
// may record its decision in d.backend_plan (called once, by create).
size_t reduce_sum_workspace_bytes(ReduceSumDescriptor& d);

}  // namespace oprt
