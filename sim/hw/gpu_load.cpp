// Looking up a GPU by catalog id or reading one from JSON.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

std::string catalog_ids() {
  std::string s;
  for (const auto& g : gpu_catalog()) s += (s.empty() ? "" : ", ") + g.id;
  return s;
}

/// Lower case, vendor and brand words dropped, blanks and underscores as '-':
/// "NVIDIA GeForce RTX 4090" -> "rtx-4090", "AMD Instinct MI300X" -> "mi300x".
std::string normalize_gpu_name(const std::string& name) {
  std::string s = ascii_lower(name);
  for (char& c : s)
    if (c == ' ' || c == '_') c = '-';
  for (const char* prefix : {"nvidia-", "amd-", "instinct-", "geforce-", "tesla-"})
    while (s.starts_with(prefix)) s.erase(0, std::char_traits<char>::length(prefix));
  std::string out;
  for (char c : s)
    if (!(c == '-' && (out.empty() || out.back() == '-'))) out += c;
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

const GpuSpec* find_catalog(const std::string& id) {
  const std::string key = normalize_gpu_name(id);
  std::string target = key;
  // The names users type for a catalog GPU (each file's "aliases"): vendor-less short forms
  // ("h100", "4090") and what nvidia-smi / torch.cuda.get_device_name print, normalized.
  for (const auto& [alias, gpu_id] : gpu_catalog_aliases())
    if (key == alias) target = gpu_id;
  for (const auto& g : gpu_catalog())
    if (g.id == target) return &g;
  return nullptr;
}

constexpr double kHuge = 1e30;

}  // namespace

void validate_gpu(const GpuSpec& g, const std::string& where) {
  auto positive = [&](double v, const char* field) {
    if (!(v > 0) || !std::isfinite(v))
      throw InputError(where, std::string(field) + " must be a positive number, got " + std::to_string(v));
  };
  auto non_negative = [&](double v, const char* field) {
    if (!(v >= 0) || !std::isfinite(v))
      throw InputError(where, std::string(field) + " must be zero or positive, got " + std::to_string(v));
  };
  positive(static_cast<double>(g.memory_bytes), "memory_bytes");
  positive(g.hbm_bandwidth_bytes_per_s, "hbm_bandwidth_bytes_per_s");
  positive(g.bf16_flops, "bf16_flops");
  non_negative(g.fp8_flops, "fp8_flops");
  non_negative(g.int8_ops, "int8_ops");
  non_negative(g.host_link_bytes_per_s, "host_link_bytes_per_s");
  non_negative(g.interconnect_bytes_per_s, "interconnect_bytes_per_s");
  non_negative(g.price_per_gpu_hour_usd, "price_per_gpu_hour_usd");
}

GpuSpec gpu_from_json(const nlohmann::json& obj, const std::string& origin) {
  JsonObjectReader r(obj, origin, "");
  r.reject_unknown({"base", "id", "name", "memory_bytes", "hbm_bandwidth_bytes_per_s", "bf16_flops", "fp8_flops",
                    "int8_ops", "host_link_bytes_per_s", "interconnect_bytes_per_s", "price_per_gpu_hour_usd",
                    "interconnect_kind", "visible_memory_bytes", "compute_capability", "sm_count"});
  GpuSpec g;
  const bool has_base = r.has("base");
  if (has_base) {
    const GpuSpec* base = find_catalog(r.get_string("base"));
    if (!base) throw InputError(r.where("base"), "unknown catalog GPU (known: " + catalog_ids() + ")");
    g = *base;
  }
  // Without a base every figure is required: a missing one would otherwise silently be zero.
  auto number = [&](const char* key, double min, double& out) {
    if (has_base)
      out = r.get_number_in(key, min, kHuge, out);
    else
      out = r.get_number_in(key, min, kHuge);
  };
  g.id = r.get_string("id", has_base ? g.id : origin);
  g.name = r.get_string("name", has_base ? g.name : g.id);
  g.memory_bytes = has_base ? r.get_int("memory_bytes", 1, int64_t{1} << 50, g.memory_bytes)
                            : r.get_int("memory_bytes", 1, int64_t{1} << 50);
  // A new memory size without a new visible figure: take the size as what vLLM sees.
  if (r.has("memory_bytes") && !r.has("visible_memory_bytes")) g.visible_memory_bytes = 0;
  g.visible_memory_bytes = r.get_int("visible_memory_bytes", 0, g.memory_bytes, g.visible_memory_bytes);
  number("hbm_bandwidth_bytes_per_s", 1, g.hbm_bandwidth_bytes_per_s);
  number("bf16_flops", 1, g.bf16_flops);
  number("fp8_flops", 0, g.fp8_flops);
  number("int8_ops", 0, g.int8_ops);
  number("host_link_bytes_per_s", 0, g.host_link_bytes_per_s);
  number("interconnect_bytes_per_s", 0, g.interconnect_bytes_per_s);
  number("price_per_gpu_hour_usd", 0, g.price_per_gpu_hour_usd);
  g.interconnect_kind = r.get_string("interconnect_kind", g.interconnect_kind);
  if (g.interconnect_kind != "nvlink" && g.interconnect_kind != "pcie" && g.interconnect_kind != "xgmi")
    throw InputError(r.where("interconnect_kind"), "expected \"nvlink\", \"pcie\" or \"xgmi\", got \"" +
                                                       g.interconnect_kind + "\"");
  g.compute_capability = static_cast<int>(r.get_int("compute_capability", 0, 1000, g.compute_capability));
  g.sm_count = r.get_int("sm_count", 0, 100000, g.sm_count);
  validate_gpu(g, origin);
  return g;
}

GpuSpec load_gpu(const std::string& id_or_path) {
  if (const GpuSpec* g = find_catalog(id_or_path)) return *g;
  std::error_code ec;
  if (!id_or_path.empty() && std::filesystem::is_regular_file(id_or_path, ec))
    return gpu_from_json(read_json_file(id_or_path), id_or_path);
  throw FieldError("gpu", "\"" + id_or_path + "\" is neither a catalog GPU (an id, or a name such as h100 or \"NVIDIA H100 80GB HBM3\") "
                                "nor an existing JSON file (catalog: " + catalog_ids() + ")");
}

}  // namespace kvcap
