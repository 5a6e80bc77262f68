#include "sim/cost/engine_profile.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/util/atomic_file.hpp"
#include "sim/util/error.hpp"
#include "sim/util/embedded_file.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

// Generated at build time from scenarios/engine-profiles/*.json (CMakeLists.txt).
extern const EmbeddedFile kEmbeddedEngineProfiles[];

namespace {

// Bounds keep a hand-edited or fitted profile physical: a step term above a second, or a
// front-end delay above ten seconds, is a unit mistake, not an engine.
constexpr double kMaxStepTerm = 1.0;

EngineOverheads read_terms(const JsonObjectReader& t) {
  t.reject_unknown({"step_fixed_s", "per_sequence_s", "per_token_s", "attention_seq_layer_s", "gemm_half_tokens",
                    "moe_layer_s", "eager_layer_s", "piecewise_layer_s"});
  EngineOverheads o;
  o.step_fixed_s = t.get_number_in("step_fixed_s", 0, kMaxStepTerm, 0);
  o.per_sequence_s = t.get_number_in("per_sequence_s", 0, kMaxStepTerm, 0);
  o.per_token_s = t.get_number_in("per_token_s", 0, kMaxStepTerm, 0);
  o.attention_seq_layer_s = t.get_number_in("attention_seq_layer_s", 0, kMaxStepTerm, 0);
  o.gemm_half_tokens = t.get_number_in("gemm_half_tokens", 0, 1e6, 0);
  o.moe_layer_s = t.get_number_in("moe_layer_s", 0, kMaxStepTerm, 0);
  o.eager_layer_s = t.get_number_in("eager_layer_s", 0, kMaxStepTerm, 0);
  o.piecewise_layer_s = t.get_number_in("piecewise_layer_s", 0, kMaxStepTerm, 0);
  return o;
}

}  // namespace

namespace {

/// The figure for `link`, or the `pick`-most of the known ones when the link has none.
double for_link(const std::map<std::string, double>& m, const std::string& link, double fallback,
                const double& (*pick)(const double&, const double&)) {
  const auto it = m.find(link);
  if (it != m.end()) return it->second;
  if (m.empty()) return fallback;
  double v = m.begin()->second;
  for (const auto& [k, x] : m) v = pick(v, x);
  return v;
}

}  // namespace

double EngineProfile::allreduce_latency_for(const std::string& link, int64_t tp, bool* measured) const {
  if (measured)
    *measured = std::find(allreduce_links_measured.begin(), allreduce_links_measured.end(), link) !=
                allreduce_links_measured.end();
  const double base = for_link(allreduce_latency_s, link, 0.0, std::max<double>);
  const double rank = for_link(allreduce_rank_latency_s, link, 0.0, std::max<double>);
  return base + rank * static_cast<double>(std::max<int64_t>(0, tp - 2));
}

double EngineProfile::allreduce_bandwidth_fraction_for(const std::string& link) const {
  return for_link(allreduce_bandwidth_fraction, link, 1.0, std::min<double>);
}

std::string EngineProfile::describe() const {
  std::ostringstream d;
  d << engine << (engine_version.empty() ? "" : " " + engine_version) << " engine profile " << name << " (";
  if (extrapolated)
    d << "extrapolated to " << gpu << " from " << (derived_from.empty() ? "another GPU" : derived_from)
      << ": no measured run on this GPU";
  else if (provenance.contains("runs") && provenance["runs"].is_number_integer())
    d << "fitted to " << provenance["runs"].get<int64_t>() << " measured runs on " << gpu;
  else
    d << "for " << gpu;
  d << ")";
  return d.str();
}

nlohmann::json engine_profile_to_json(const EngineProfile& p) {
  const EngineOverheads& o = p.overheads;
  nlohmann::json j;
  j["kind"] = "kvcap-engine-profile";
  j["version"] = p.version;
  j["name"] = p.name;
  j["engine"] = p.engine;
  j["engine_version"] = p.engine_version;
  j["gpu"] = p.gpu;
  j["extrapolated"] = p.extrapolated;
  j["derived_from"] = p.derived_from;
  j["async_scheduling"] = p.async_scheduling;
  j["cuda_graphs"] = p.cuda_graphs;
  j["terms"] = {{"step_fixed_s", o.step_fixed_s},
                {"per_sequence_s", o.per_sequence_s},
                {"per_token_s", o.per_token_s},
                {"attention_seq_layer_s", o.attention_seq_layer_s},
                {"gemm_half_tokens", o.gemm_half_tokens},
                {"moe_layer_s", o.moe_layer_s},
                {"eager_layer_s", o.eager_layer_s},
                {"piecewise_layer_s", o.piecewise_layer_s}};
  for (const auto& [key, m] : {std::pair{"allreduce_latency_s", &p.allreduce_latency_s},
                               std::pair{"allreduce_rank_latency_s", &p.allreduce_rank_latency_s},
                               std::pair{"allreduce_bandwidth_fraction", &p.allreduce_bandwidth_fraction}}) {
    j[key] = nlohmann::json::object();
    for (const auto& [k, v] : *m) j[key][k] = v;
  }
  j["allreduce_links_measured"] = p.allreduce_links_measured;
  j["front_end"] = {{"per_request_s", p.front_end.per_request_s},
                    {"per_prompt_token_s", p.front_end.per_prompt_token_s}};
  j["provenance"] = p.provenance;
  j["fit"] = p.fit;
  return j;
}

EngineProfile engine_profile_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw InputError(origin, "an engine profile must be a JSON object");
  JsonObjectReader r(j, origin, "");
  r.reject_unknown({"kind", "version", "name", "engine", "engine_version", "gpu", "extrapolated", "derived_from",
                    "async_scheduling", "cuda_graphs", "terms", "allreduce_latency_s", "allreduce_rank_latency_s",
                    "allreduce_bandwidth_fraction", "allreduce_links_measured",
                    "front_end", "provenance", "fit"});
  if (r.get_string("kind") != "kvcap-engine-profile")
    throw InputError(r.where("kind"), "expected \"kvcap-engine-profile\" (is this a kernel profile? those go in "
                                      "cost_model.path)");
  EngineProfile p;
  p.version = r.get_int("version", 1, 1);
  p.name = r.get_string("name");
  if (p.name.empty()) throw InputError(r.where("name"), "expected a non-empty name");
  p.engine = r.get_string("engine");
  p.engine_version = r.get_string("engine_version", "");
  p.gpu = ascii_lower(r.get_string("gpu"));
  p.extrapolated = r.get_bool("extrapolated", false);
  p.derived_from = r.get_string("derived_from", "");
  p.async_scheduling = r.get_bool("async_scheduling", true);
  p.cuda_graphs = r.get_bool("cuda_graphs", true);
  p.overheads = read_terms(r.object("terms"));
  const auto per_link = [&r](const char* key, double lo, double hi, std::map<std::string, double>& out) {
    if (!r.has(key)) return;
    auto a = r.object(key);
    for (const auto& [k, v] : a.json().items()) out[k] = a.get_number_in(k, lo, hi);
  };
  per_link("allreduce_latency_s", 0, kMaxStepTerm, p.allreduce_latency_s);
  per_link("allreduce_rank_latency_s", 0, kMaxStepTerm, p.allreduce_rank_latency_s);
  per_link("allreduce_bandwidth_fraction", 0.01, 1.0, p.allreduce_bandwidth_fraction);
  if (r.has("allreduce_links_measured")) {
    const auto& m = r.raw("allreduce_links_measured");
    if (!m.is_array()) throw InputError(r.where("allreduce_links_measured"), "expected an array of link kinds");
    for (const auto& v : m) {
      if (!v.is_string()) throw InputError(r.where("allreduce_links_measured"), "expected strings");
      p.allreduce_links_measured.push_back(v.get<std::string>());
    }
  }
  if (r.has("front_end")) {
    auto f = r.object("front_end");
    f.reject_unknown({"per_request_s", "per_prompt_token_s"});
    p.front_end.per_request_s = f.get_number_in("per_request_s", 0, 10.0, 0);
    p.front_end.per_prompt_token_s = f.get_number_in("per_prompt_token_s", 0, 0.01, 0);
  }
  if (r.has("provenance")) p.provenance = r.raw("provenance");
  if (r.has("fit")) p.fit = r.raw("fit");
  return p;
}

EngineProfile read_engine_profile_file(const std::string& path) {
  return engine_profile_from_json(read_json_file(path), path);
}

void write_engine_profile_file(const EngineProfile& p, const std::string& path) {
  write_file_atomically(path, engine_profile_to_json(p).dump(2) + "\n");
}

const std::vector<EngineProfile>& shipped_engine_profiles() {
  static const std::vector<EngineProfile> profiles = [] {
    std::vector<EngineProfile> v;
    for (const EmbeddedFile* e = kEmbeddedEngineProfiles; e->path != nullptr; ++e)
      v.push_back(engine_profile_from_json(parse_json_text(e->text, e->path), e->path));
    return v;
  }();
  return profiles;
}

std::optional<EngineProfile> find_shipped_engine_profile(const std::string& engine, const std::string& gpu) {
  const std::string g = ascii_lower(gpu);
  const EngineProfile* carried = nullptr;
  for (const auto& p : shipped_engine_profiles()) {
    if (p.engine != engine || p.gpu != g) continue;
    if (!p.extrapolated) return p;
    if (!carried) carried = &p;
  }
  if (carried) return *carried;
  return std::nullopt;
}

EngineProfile load_engine_profile(const std::string& name_or_path, const std::string& where) {
  for (const auto& p : shipped_engine_profiles())
    if (p.name == name_or_path) return p;
  std::error_code ec;
  if (std::filesystem::exists(name_or_path, ec)) {
    // A path: a regular file only (a directory, /dev/zero or a FIFO never reads as a profile).
    require_regular_file(name_or_path, where, "engine profile file");
    return read_engine_profile_file(name_or_path);
  }
  std::string names;
  for (const auto& p : shipped_engine_profiles()) names += (names.empty() ? "" : ", ") + p.name;
  throw InputError(where, "no shipped engine profile named '" + escape_text(name_or_path) +
                              "' and no file at that path (shipped: " + (names.empty() ? "none" : names) + ")");
}

}  // namespace kvcap
