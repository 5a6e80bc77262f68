#include "sim/cost/profile_cost_model.hpp"

#include <algorithm>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

CostCoefficients profile_coefficients(const Profile& p, const GpuSpec& gpu, DType kv_dtype, bool fp8_weights,
                                      const std::string& origin) {
  if (ascii_lower(p.gpu_id) != ascii_lower(gpu.id))
    throw InputError(origin, "profile is for gpu " + quote_input(p.gpu_id) + " but the scenario runs on " + quote_input(gpu.id));
  const std::string kv = dtype_name(kv_dtype);
  auto dec = p.coefficients.decode.find(kv);
  if (dec == p.coefficients.decode.end()) {
    std::string have;
    for (const auto& [k, v] : p.coefficients.decode) have += (have.empty() ? "" : ", ") + k;
    throw InputError(origin, "profile has no paged-decode fit for KV dtype " + quote_input(kv) + " (it has: " + have + ")");
  }
  const auto& pc = p.coefficients;
  CostCoefficients c;
  const bool use_fp8 = fp8_weights && pc.gemm_fp8_compute.rate > 0;
  c.linear_flops_per_s = use_fp8 ? pc.gemm_fp8_compute.rate : pc.gemm_compute.rate;
  c.gemm_launch_s = use_fp8 ? pc.gemm_fp8_compute.launch_s : pc.gemm_compute.launch_s;
  c.linear_bytes_per_s = pc.gemm_memory.rate;
  // Prefill attention is tensor-core work like a GEMM; it is not timed on its own, so it runs at
  // the bf16 GEMM rate (see kernels/NOTES.md, "What is measured").
  c.attention_flops_per_s = pc.gemm_compute.rate;
  c.kv_read_bytes_per_s = dec->second.rate;
  c.attention_launch_s = dec->second.launch_s;
  auto app = pc.append.find(kv);
  c.kv_write_bytes_per_s = app != pc.append.end() ? app->second.rate : pc.copy_bytes_per_s;
  c.interconnect_bytes_per_s = gpu.interconnect_bytes_per_s > 0 ? gpu.interconnect_bytes_per_s : 1.0;
  if (!(gpu.host_link_bytes_per_s > 0)) throw InputError("gpu " + quote_input(gpu.id), "needs host_link_bytes_per_s > 0");
  c.host_link_bytes_per_s = gpu.host_link_bytes_per_s;
  c.step_overhead_s = pc.step_overhead_s;
  c.peak_flops = (fp8_weights && gpu.fp8_flops > 0) ? std::max(gpu.fp8_flops, p.spec_bf16_flops) : p.spec_bf16_flops;
  c.peak_hbm_bytes_per_s = p.spec_hbm_bandwidth_bytes_per_s;
  return c;
}

std::string profile_origin(const Profile& p) {
  const auto flag = [&p](const char* key) {
    return p.provenance.is_object() && p.provenance.contains(key) ? p.provenance[key] : nlohmann::json();
  };
  std::string s;
  if (flag("synthetic").is_boolean() && flag("synthetic").get<bool>())
    s = "NOT measured: synthetic dry-run timings (tools/gpu-check --dry-run)";
  else
    s = p.measured ? "measured on the GPU" : "NOT measured: spec-sheet roofline profile";
  const nlohmann::json incomplete = flag("incomplete");
  if (incomplete.is_string() && !incomplete.get<std::string>().empty())
    s += "; incomplete run: " + incomplete.get<std::string>();
  return s;
}


}  // namespace kvcap
