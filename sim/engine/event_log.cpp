#include "sim/engine/event_log.hpp"

#include <nlohmann/json.hpp>

#include "sim/engine/replica.hpp"
#include "sim/util/text.hpp"  // format_number

namespace kvcap {

namespace {
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

void id_list(std::string& out, const Replica& r, const std::vector<int32_t>& slots) {
  out += '[';
  for (size_t i = 0; i < slots.size(); ++i) {
    if (i) out += ',';
    out += quoted(r.state().seq(slots[i]).req.id);
  }
  out += ']';
}
}  // namespace

void EventLogWriter::on_schedule(const Replica& r, int64_t step, double now_s, const StepPlan& plan) {
  const auto idx = static_cast<size_t>(r.index());
  if (pending_.size() <= idx) pending_.resize(idx + 1);
  Pending& p = pending_[idx].emplace_back();
  std::string& h = p.head;
  h = "{\"replica\":" + std::to_string(r.index()) + ",\"step\":" + std::to_string(step) +
      ",\"time_s\":" + format_number(now_s) + ",\"scheduled\":[";
  for (size_t i = 0; i < plan.scheduled.size(); ++i) {
    const ScheduledEntry& e = plan.scheduled[i];
    if (i) h += ',';
    h += "{\"id\":" + quoted(r.state().seq(e.slot).req.id) + ",\"tokens\":" + std::to_string(e.tokens) +
         ",\"kind\":\"" + scheduled_kind_name(e.kind) + "\",\"cached_tokens\":" + std::to_string(e.cached_tokens) + "}";
  }
  h += "],\"preempted\":";
  id_list(h, r, plan.preempted);
  std::string& t = p.tail;
  t = ",\"free_blocks\":" + std::to_string(r.kv().num_free_blocks()) + ",\"running\":";
  id_list(t, r, r.state().running);
  t += ",\"waiting\":";
  r.state().waiting.ordered(order_);
  id_list(t, r, order_);
  t += "}";
}

void EventLogWriter::on_step_end(const Replica& r, double, std::span<const int32_t> finished) {
  const auto idx = static_cast<size_t>(r.index());
  std::string fin = ",\"finished\":";
  id_list(fin, r, std::vector<int32_t>(finished.begin(), finished.end()));
  if (idx >= pending_.size() || pending_[idx].empty()) return;
  const Pending& p = pending_[idx].front();
  os_ << p.head << fin << p.tail << '\n';
  pending_[idx].pop_front();
}

}  // namespace kvcap
