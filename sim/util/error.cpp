#include "sim/util/error.hpp"

namespace kvcap {

void throw_internal(const char* cond, const char* file, int line, const std::string& msg) {
  throw InternalError(std::string("internal invariant failed: ") + cond + " at " + file + ":" +
                      std::to_string(line) + (msg.empty() ? "" : " (" + msg + ")"));
}

}  // namespace kvcap
