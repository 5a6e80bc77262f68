#include "sim/sched/scheduler_settings.hpp"

#include <string>

#include "sim/util/error.hpp"
#include "sim/util/named_variant.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

const char* scheduler_name(const SchedulerSettings& s) { return kSchedulerNames[s.index()]; }

SchedulerSettings scheduler_named(std::string_view name) {
  if (auto s = variant_named<SchedulerSettings>(name, kSchedulerNames)) return *s;
  throw FieldError("scheduler", "unknown value " + quote_input(std::string(name)) + " (expected one of " +
                                    quoted_names(kSchedulerNames) + ")");
}

}  // namespace kvcap
