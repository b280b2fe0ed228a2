// Status + message plumbing shared by every backend.
//
// Inside the runtime, validation throws oprt::Error; every exported C function wraps
// its body in oprt::guard(), which turns the exception into a status code and stores
// the message as the thread's last error. No C++ exception ever crosses the C ABI.
#pragma once

#include <new>
#include <sstream>
#include <stdexcept>
#include <string>

#include "operator_runtime/oprt.h"

namespace oprt {

struct Error : std::runtime_error {
  oprt_status status;
  Error(oprt_status s, const std::string& message) : std::runtime_error(message), status(s) {}
};

void set_last_error(const std::string& message);
void clear_last_error();

// Build a message from any streamable pieces: fail(OPRT_STATUS_BAD_SHAPE, "rank ", r, " > 8").
template <class... Parts>
[[noreturn]] void fail(oprt_status status, const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(status, os.str());
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
