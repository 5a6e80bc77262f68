#include "sim/sched/step_plan.hpp"

namespace kvcap {

const char* scheduled_kind_name(ScheduledKind k) {
  switch (k) {
    case ScheduledKind::new_request: return "new";
    case ScheduledKind::running: return "running";
    case ScheduledKind::resumed: return "resumed";
    case ScheduledKind::swapped_in: return "swapped_in";
  }
  return "?";
}

}  // namespace kvcap
