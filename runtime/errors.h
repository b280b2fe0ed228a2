// Status + message plumbing shared by every backend.
//
// Inside the runtime, validation throws oprt::Error; every exported C function wraps
// its body in oprt::guard(), which turns the exception into a status code and stores
// the message as the thread's last error. No C++ exception ever crosses the C ABI.
#pragma once

#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "operator_runtime/oprt.h"

namespace oprt {

struct Error : std::runtime_error {
  oprt_status status;
  Error(oprt_status s, const std::string& message) : std::runtime_error(message), status(s) {}
};

void set_last_error(const std::string& message);
void clear_last_error();

// Message pieces are strings or integers. (No iostreams: they depend on the process's
// locale machinery, which a host program such as Python with torch loaded may have set
// up from another libstdc++; plain string building cannot go wrong that way.)
inline void append(std::string& s, const char* part) { s += part; }
inline void append(std::string& s, const std::string& part) { s += part; }
template <class Int, class = std::enable_if_t<std::is_integral_v<Int>>>
void append(std::string& s, Int part) {
  s += std::to_string(part);
}

// Builds the message from its pieces and throws: fail(OPRT_STATUS_BAD_SHAPE, "rank ", r, " > 8").
template <class... Parts>
[[noreturn]] void fail(oprt_status status, const Parts&... parts) {
  std::string message;
  (append(message, parts), ...);
  throw Error(status, message);
}

template <class Body>
oprt_status guard(Body&& body) noexcept {
  try {
    clear_last_error();
    body();
    return OPRT_STATUS_SUCCESS;
  } catch (const Error& e) {
    set_last_error(e.what());
    return e.status;
  } catch (const std::bad_alloc&) {
    set_last_error("out of host memory");
    return OPRT_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(std::string("internal error: ") + e.what());
    return OPRT_STATUS_INTERNAL;
  } catch (...) {
    set_last_error("internal error: unknown exception");
    return OPRT_STATUS_INTERNAL;
  }
}

template <class T>
void require_not_null(const T* p, const char* what) {
  if (p == nullptr) fail(OPRT_STATUS_NULL_POINTER, what, " is NULL");
}

}  // namespace oprt
