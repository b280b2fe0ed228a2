#include "errors.h"

namespace {
thread_local std::string last_error;
}

namespace oprt {
void set_last_error(const std::string& message) { last_error = message; }
void clear_last_error() { last_error.clear(); }
}  // namespace oprt

extern "C" OPRT_API const char* oprt_last_error(void) { return last_error.c_str(); }
