#include "kernels/calibrate/profile.hpp"

#include <fstream>

#include "sim/util/atomic_file.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

namespace {

nlohmann::json rate_to_json(const FittedRate& r) {
  return {{"rate", r.rate}, {"launch_s", r.launch_s}, {"fit_rel_rms", r.fit_rel_rms}, {"points", r.points}};
}

FittedRate rate_from_json(const JsonObjectReader& r, bool allow_zero_rate) {
  r.reject_unknown({"rate", "launch_s", "fit_rel_rms", "points"});
  FittedRate f;
  f.rate = r.get_number_in("rate", allow_zero_rate ? 0.0 : 1e-300, 1e18);
  f.launch_s = r.get_number_in("launch_s", 0.0, 1.0);
  f.fit_rel_rms = r.get_number_in("fit_rel_rms", 0.0, 1e6);
  f.points = r.get_int("points", 0, 1'000'000'000);
  return f;
}

std::map<std::string, FittedRate> rates_from_json(const JsonObjectReader& r) {
  std::map<std::string, FittedRate> out;
  for (const auto& [name, value] : r.json().items()) {
    bool known = false;
    for (const char* k : kKernelKvDtypes) known = known || name == k;
    if (!known && name != "fp8_e5m2")
      throw InputError(r.where(name),
                       "unknown KV dtype " + quote_input(name) + " (expected bf16, fp16, fp8_e4m3, fp8_e5m2, int8, int4)");
    out[name] = rate_from_json(r.object(name), false);
  }
  return out;
}

}  // namespace

nlohmann::json profile_to_json(const Profile& p) {
  nlohmann::json c;
  c["copy_bytes_per_s"] = p.coefficients.copy_bytes_per_s;
  c["gemm_compute"] = rate_to_json(p.coefficients.gemm_compute);
  c["gemm_memory"] = rate_to_json(p.coefficients.gemm_memory);
  c["gemm_fp8_compute"] = rate_to_json(p.coefficients.gemm_fp8_compute);
  c["decode"] = nlohmann::json::object();
  for (const auto& [k, v] : p.coefficients.decode) c["decode"][k] = rate_to_json(v);
  c["append"] = nlohmann::json::object();
  for (const auto& [k, v] : p.coefficients.append) c["append"][k] = rate_to_json(v);
  c["step_overhead_s"] = p.coefficients.step_overhead_s;
  nlohmann::json j;
  j["format"] = "kvcap-profile";
  j["version"] = p.version;
  j["measured"] = p.measured;
  j["gpu_id"] = p.gpu_id;
  j["provenance"] = p.provenance;
  j["ceilings"] = {{"spec_bf16_flops", p.spec_bf16_flops},
                   {"spec_hbm_bandwidth_bytes_per_s", p.spec_hbm_bandwidth_bytes_per_s},
                   {"copy_bytes_per_s", p.coefficients.copy_bytes_per_s},
                   {"gemm_bf16_flops", p.coefficients.gemm_compute.rate}};
  j["checks"] = p.checks;
  j["raw"] = p.raw;
  j["coefficients"] = c;
  return j;
}

Profile profile_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw InputError(origin, "a profile must be a JSON object");
  JsonObjectReader r(j, origin, "");
  r.reject_unknown({"format", "version", "measured", "gpu_id", "provenance", "ceilings", "checks", "raw", "coefficients"});
  if (r.get_string("format") != "kvcap-profile")
    throw InputError(r.where("format"), "expected \"kvcap-profile\"");
  Profile p;
  p.version = r.get_int("version", 1, 1);
  p.measured = r.get_bool("measured");
  p.gpu_id = r.get_string("gpu_id");
  if (p.gpu_id.empty()) throw InputError(r.where("gpu_id"), "must name the GPU the profile is for");
  p.provenance = r.object("provenance").json();
  if (r.has("checks")) {
    if (!r.raw("checks").is_array()) throw InputError(r.where("checks"), "expected an array");
    p.checks = r.raw("checks");
    for (const auto& c : p.checks)
      if (!c.is_object() || !c.contains("passed") || c["passed"] != true)
        throw InputError(r.where("checks"), "profile records a failed or malformed check: " + excerpt(c.dump()));
  }
  if (p.measured && p.checks.empty())
    throw InputError(r.where("checks"), "a measured profile must record the kernel checks it passed");
  if (r.has("raw")) p.raw = r.object("raw").json();
  auto ceil = r.object("ceilings");
  ceil.reject_unknown({"spec_bf16_flops", "spec_hbm_bandwidth_bytes_per_s", "copy_bytes_per_s", "gemm_bf16_flops"});
  p.spec_bf16_flops = ceil.get_number_in("spec_bf16_flops", 1e9, 1e18);
  p.spec_hbm_bandwidth_bytes_per_s = ceil.get_number_in("spec_hbm_bandwidth_bytes_per_s", 1e6, 1e15);
  auto c = r.object("coefficients");
  c.reject_unknown({"copy_bytes_per_s", "gemm_compute", "gemm_memory", "gemm_fp8_compute", "decode", "append",
                    "step_overhead_s"});
  auto& pc = p.coefficients;
  pc.copy_bytes_per_s = c.get_number_in("copy_bytes_per_s", 1e6, 1e15);
  pc.gemm_compute = rate_from_json(c.object("gemm_compute"), false);
  pc.gemm_memory = rate_from_json(c.object("gemm_memory"), false);
  pc.gemm_fp8_compute = rate_from_json(c.object("gemm_fp8_compute"), true);
  pc.decode = rates_from_json(c.object("decode"));
  pc.append = rates_from_json(c.object("append"));
  pc.step_overhead_s = c.get_number_in("step_overhead_s", 0.0, 10.0);
  if (pc.decode.empty()) throw InputError(c.where("decode"), "needs at least one KV dtype");
  return p;
}

Profile read_profile_file(const std::string& path) { return profile_from_json(read_json_file(path), path); }

void write_profile_file(const Profile& p, const std::string& path) {
  write_file_atomically(path, profile_to_json(p).dump(2) + "\n");
}

}  // namespace kvcap
