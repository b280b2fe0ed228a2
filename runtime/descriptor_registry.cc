#include "descriptor_registry.h"

#include <mutex>
#include <unordered_set>

namespace oprt {
namespace {
std::mutex registry_mutex;
std::unordered_set<const void*>& live() {
  static auto* set = new std::unordered_set<const void*>();  // never destroyed: safe at exit
  return *set;
}

const Descriptor* find_locked(const void* handle, const char* op) {
  if (handle == nullptr) fail(OPRT_STATUS_NULL_POINTER, "desc is NULL");
  if (live().count(handle) == 0)
    fail(OPRT_STATUS_BAD_DESCRIPTOR, "desc is not a live ", op, " descriptor of the ",
         oprt_backend_name(), " backend (destroyed already, or made by another backend)");
  auto* d = static_cast<const Descriptor*>(handle);
  if (std::strcmp(d->op, op) != 0)
    fail(OPRT_STATUS_BAD_DESCRIPTOR, "desc is a ", d->op, " descriptor, not a ", op, " descriptor");
  return d;
}
}  // namespace

void register_descriptor(Descriptor* d) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  live().insert(d);
}

const Descriptor* find_descriptor(const void* handle, const char* op) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  return find_locked(handle, op);
}

void destroy_descriptor(const void* handle, const char* op) {
  const Descriptor* d;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    d = find_locked(handle, op);
    live().erase(handle);
  }
  delete d;
}

}  // namespace oprt
