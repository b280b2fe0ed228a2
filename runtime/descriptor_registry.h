// Live-descriptor bookkeeping, so misuse is an error status and never undefined behaviour.
//
// A descriptor handle is only dereferenced after it is found in this library's set of
// live descriptors. That turns "executed as another operator", "used after destroy",
// "destroyed twice" and "created by another backend's library" into BAD_DESCRIPTOR.
#pragma once

#include <cstring>
#include <initializer_list>
#include <memory>

#include "errors.h"

namespace oprt {

struct Descriptor {
  const char* op;  // the operator name; compared by content
  explicit Descriptor(const char* op_name) : op(op_name) {}
  virtual ~Descriptor() = default;
};

void register_descriptor(Descriptor* d);
// Removes d from the live set and deletes it; throws BAD_DESCRIPTOR if not live.
void destroy_descriptor(const void* handle, const char* op);
// Returns the live descriptor behind handle if it belongs to op; throws otherwise.
const Descriptor* find_descriptor(const void* handle, const char* op);

template <class D>
const D& lookup(const void* handle) {
  return static_cast<const D&>(*find_descriptor(handle, D::kOp));
}

// Registers a fully built descriptor and hands its opaque handle to the caller.
template <class D, class Handle>
void publish(Handle** handle, std::unique_ptr<D> d) {
  register_descriptor(d.get());
  *handle = reinterpret_cast<Handle*>(d.release());
}

}  // namespace oprt

namespace oprt {

// A data pointer execute() receives; `needed` is false for an empty tensor, which may
// legitimately have no storage (torch gives such tensors a NULL data pointer).
struct Buffer {
  const void* ptr;
  const char* name;
  bool needed;
};

inline void require_buffers(std::initializer_list<Buffer> buffers) {
  for (const Buffer& b : buffers)
    if (b.needed) require_not_null(b.ptr, b.name);
}

// The checks every execute() makes first: the descriptor is live and of this operator,
// and the workspace is as large as get_workspace_size() said.
template <class D, class Handle>
const D& begin_execute(const Handle* handle, const void* workspace, size_t workspace_size) {
  const D& d = lookup<D>(handle);
  if (workspace_size < d.workspace_bytes)
    fail(OPRT_STATUS_WORKSPACE_TOO_SMALL, "workspace_size ", workspace_size, " is below the ", d.workspace_bytes,
         " bytes this ", D::kOp, " descriptor needs");
  if (d.workspace_bytes > 0) require_not_null(workspace, "workspace");
  return d;
}

// The bodies of oprt_get_<op>_workspace_size and oprt_destroy_<op>_descriptor, the same
// for every operator once its descriptor type D is known.
template <class D, class Handle>
oprt_status workspace_size_of(const Handle* handle, size_t* size) {
  return guard([&] {
    require_not_null(size, "size");
    *size = lookup<D>(handle).workspace_bytes;
  });
}

template <class D, class Handle>
oprt_status destroy_handle(Handle* handle) {
  return guard([&] { destroy_descriptor(handle, D::kOp); });
}

}  // namespace oprt
