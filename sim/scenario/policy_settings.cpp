#include "sim/scenario/policy_settings.hpp"

#include "sim/util/error.hpp"
#include "sim/util/named_variant.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

std::string pick(const JsonObjectReader& r, const std::string& key, const char* fallback,
                 std::initializer_list<const char*> allowed) {
  const std::span<const char* const> names(allowed.begin(), allowed.size());
  return names[read_named(r, key, fallback, names)];
}

void only_with(const JsonObjectReader& r, const std::string& key, bool ok, const std::string& what) {
  if (r.has(key) && !ok) throw InputError(r.where(key), "only applies " + what);
}

AdmissionSettings parse_admission(const JsonObjectReader& a) {
  a.reject_unknown({"classes", "predictive", "predictive_quantile", "preempt_lower_classes"});
  AdmissionSettings s;
  if (a.has("classes")) {
    const auto& arr = a.raw("classes");
    if (!arr.is_array() || arr.empty())
      throw InputError(a.where("classes"), "expected a non-empty array of {priority, max_queue_len, "
                                           "max_queue_wait_s, shed_kv_fraction}");
    for (size_t i = 0; i < arr.size(); ++i) {
      JsonObjectReader c(arr[i], a.file(), a.pointer() + "/classes/" + std::to_string(i));
      c.reject_unknown({"priority", "max_queue_len", "max_queue_wait_s", "shed_kv_fraction"});
      ClassAdmission k;
      k.priority = static_cast<int>(c.get_int("priority", -1000000, 1000000));
      k.max_queue_len = c.get_int("max_queue_len", 0, int64_t{1} << 40, 0);
      k.max_queue_wait_s = c.get_number_in("max_queue_wait_s", 0.0, 1e12, 0.0);
      k.shed_kv_fraction = c.get_number_in("shed_kv_fraction", 0.0, 1.0, 0.0);
      for (const auto& prev : s.classes)
        if (prev.priority == k.priority)
          throw InputError(c.where("priority"), "priority " + std::to_string(k.priority) + " listed twice");
      s.classes.push_back(k);
    }
  }
  s.predictive = a.get_bool("predictive", false);
  s.predictive_quantile = a.get_number_in("predictive_quantile", 0.01, 1.0, s.predictive_quantile);
  only_with(a, "predictive_quantile", s.predictive, "with predictive: true");
  s.preempt_lower_classes = a.get_bool("preempt_lower_classes", false);
  return s;
}

SglangOptions parse_sglang(const JsonObjectReader& g) {
  g.reject_unknown({"init_new_token_ratio", "min_new_token_ratio_factor", "new_token_ratio_decay_steps",
                    "clip_max_new_tokens", "retract_decode_steps"});
  SglangOptions s;
  s.init_new_token_ratio = g.get_number_in("init_new_token_ratio", 0.0, 1.0, s.init_new_token_ratio);
  s.min_new_token_ratio_factor = g.get_number_in("min_new_token_ratio_factor", 0.0, 1.0, s.min_new_token_ratio_factor);
  s.new_token_ratio_decay_steps = g.get_number_in("new_token_ratio_decay_steps", 1.0, 1e9, s.new_token_ratio_decay_steps);
  s.clip_max_new_tokens = g.get_int("clip_max_new_tokens", 1, int64_t{1} << 40, s.clip_max_new_tokens);
  s.retract_decode_steps = g.get_int("retract_decode_steps", 0, int64_t{1} << 40, s.retract_decode_steps);
  return s;
}

}  // namespace

const char* on_oom_name(OnOom o) { return o == OnOom::crash ? "crash" : "preempt"; }

size_t read_named(const JsonObjectReader& r, const std::string& key, const char* fallback,
                  std::span<const char* const> names) {
  const std::string v = r.get_string(key, fallback);
  if (const auto i = name_index(v, names)) return *i;
  throw InputError(r.where(key), "unknown value " + quote_input(v) + " (expected one of " + quoted_names(names) + ")");
}

SchedulerSettings parse_scheduler_settings(const JsonObjectReader& r) {
  SchedulerSettings sched = variant_default_at<SchedulerSettings>(read_named(r, "scheduler", "vllm-v1", kSchedulerNames));
  auto* stat = std::get_if<StaticScheduling>(&sched);
  auto* v0 = std::get_if<VllmV0Scheduling>(&sched);
  auto* sglang = std::get_if<SglangScheduling>(&sched);
  only_with(r, "static_batch_size", stat != nullptr, "with scheduler 'static'");
  if (stat) stat->batch_size = r.get_int("static_batch_size", 1, 1 << 24, 0);
  only_with(r, "preemption_mode", v0 != nullptr, "with scheduler 'vllm-v0'");
  only_with(r, "watermark", v0 != nullptr, "with scheduler 'vllm-v0'");
  if (v0) {
    v0->options.swap = pick(r, "preemption_mode", "recompute", {"recompute", "swap"}) == "swap";
    v0->options.watermark = r.get_number_in("watermark", 0.0, 0.99, v0->options.watermark);
  }
  only_with(r, "sglang", sglang != nullptr, "with scheduler 'sglang'");
  if (sglang && r.has("sglang")) sglang->options = parse_sglang(r.object("sglang"));
  return sched;
}

AllocatorSettings parse_allocator_settings(const JsonObjectReader& r) {
  AllocatorSettings alloc = variant_default_at<AllocatorSettings>(read_named(r, "allocator", "paged", kAllocatorNames));
  auto* contiguous = std::get_if<ContiguousAllocation>(&alloc);
  only_with(r, "contiguous_reserve", contiguous != nullptr, "with allocator 'contiguous'");
  only_with(r, "contiguous_fit", contiguous != nullptr, "with allocator 'contiguous'");
  if (contiguous) {
    contiguous->reserve = pick(r, "contiguous_reserve", "max_model_len", {"max_model_len", "prompt_plus_output"}) ==
                                  "max_model_len"
                              ? ContiguousReserve::max_model_len
                              : ContiguousReserve::prompt_plus_output;
    contiguous->fit = pick(r, "contiguous_fit", "first_fit", {"first_fit", "best_fit"}) == "first_fit"
                          ? ContiguousFit::first_fit
                          : ContiguousFit::best_fit;
  }
  return alloc;
}

PolicySettings parse_policy_settings(const JsonObjectReader& r, const SchedulerSettings& scheduler,
                                     const AllocatorSettings& allocator) {
  PolicySettings p;
  const bool contiguous = !is_paged(allocator);
  p.on_oom = pick(r, "on_oom", "preempt", {"preempt", "crash"}) == "crash" ? OnOom::crash : OnOom::preempt;
  if (p.on_oom == OnOom::crash) {
    // No default: how long a crashed server takes to come back (process start, weight loading,
    // CUDA graph capture) depends on the deployment; the user must say.
    if (!r.has("restart_s"))
      throw InputError(r.where("restart_s"), "required with on_oom 'crash': seconds until the replica serves again");
    p.restart_s = r.get_number_in("restart_s", 0.0, 1e9);
  } else {
    only_with(r, "restart_s", false, "with on_oom 'crash'");
  }

  const auto* v0 = std::get_if<VllmV0Scheduling>(&scheduler);
  const bool session_swap = r.has("session_kv") && r.get_string("session_kv") == "swap";
  only_with(r, "swap_space", v0 != nullptr || session_swap, "with scheduler 'vllm-v0' or session_kv 'swap'");
  p.swap_space_gib = r.get_number_in("swap_space", 0.0, 1e6, p.swap_space_gib);
  if (v0 && v0->options.swap && contiguous)
    throw InputError(r.where("preemption_mode"), "swap preemption needs the paged allocator");

  {
    const std::string mode = pick(r, "session_kv", "drop", {"drop", "resident", "swap"});
    p.session_kv = mode == "resident" ? SessionKv::resident : mode == "swap" ? SessionKv::swap : SessionKv::drop;
    only_with(r, "session_idle_timeout_s", p.session_kv != SessionKv::drop, "with session_kv 'resident' or 'swap'");
    if (p.session_kv == SessionKv::swap) {
      // No default: when to move an idle session off the GPU is the policy being compared.
      if (!r.has("session_idle_timeout_s"))
        throw InputError(r.where("session_idle_timeout_s"), "required with session_kv 'swap': idle seconds before the move to CPU");
      p.session_idle_timeout_s = r.get_number_in("session_idle_timeout_s", 1e-9, 1e12);
    } else {
      p.session_idle_timeout_s = r.get_number_in("session_idle_timeout_s", 0.0, 1e12, 0.0);
    }
    if (p.session_kv != SessionKv::drop && contiguous)
      throw InputError(r.where("session_kv"), "'resident' needs the paged allocator (the next turn reuses blocks)");
  }
  if (r.has("admission")) p.admission = parse_admission(r.object("admission"));
  const bool vllm = v0 != nullptr || std::holds_alternative<VllmV1Scheduling>(scheduler);
  if (p.admission.preempt_lower_classes && !vllm)
    throw InputError(r.where("admission") + "/preempt_lower_classes", "only applies with scheduler 'vllm-v1' or 'vllm-v0'");
  if (p.admission.predictive && std::holds_alternative<SglangScheduling>(scheduler))
    throw InputError(r.where("admission") + "/predictive", "does not apply with scheduler 'sglang' (it has its own conservative admission)");
  return p;
}

}  // namespace kvcap
