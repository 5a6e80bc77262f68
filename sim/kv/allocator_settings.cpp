#include "sim/kv/allocator_settings.hpp"

#include <string>

#include "sim/util/error.hpp"
#include "sim/util/named_variant.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

AllocatorSettings allocator_named(std::string_view name) {
  if (auto a = variant_named<AllocatorSettings>(name, kAllocatorNames)) return *a;
  throw FieldError("allocator", "unknown value " + quote_input(std::string(name)) + " (expected one of " +
                                    quoted_names(kAllocatorNames) + ")");
}

}  // namespace kvcap
