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
  // A backend's own choice made at create and kept for execute (0: its default). The
  // nvidia backend records its strategy override here (see its softmax kernels).
  int backend_variant = 0;
  // The backend's launch parameters chosen at create (the nvidia backend: its
  // OPRT_*_CONFIG override, parsed once there), kept for execute; zeros: its defaults.
  int backend_params[11] = {};
};

// Scratch the backend wants for this plan (bytes); each backend library defines it, and
// may record choices in d.backend_variant (called once, by create).
size_t softmax_workspace_bytes(SoftmaxDescriptor& d);

}  // namespace oprt
