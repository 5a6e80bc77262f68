#pragma once
// Engine profile: the software side of a step's cost (engine_overheads.hpp) for one serving
// engine and version, fitted to real serving runs by `kvcap calibrate --serving` (or carried over
// from such a fit to another GPU, and then marked extrapolated). It composes with a kernel
// profile (kernels/calibrate/profile.hpp, the GPU side) or the spec-sheet roofline. The JSON
// format is documented in scenarios/engine-profiles/README.md; this header is its only reader
// and writer.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cost/engine_overheads.hpp"

namespace kvcap {

struct EngineProfile {
  int64_t version = 1;
  std::string name;            ///< "vllm-0.15-h100-sxm"
  std::string engine = "vllm";
  std::string engine_version;  ///< "0.15.1"
  std::string gpu;             ///< kvcap catalog id the terms are for
  /// True when no measured run on this GPU supports the terms (carried over from `derived_from`).
  bool extrapolated = false;
  std::string derived_from;    ///< profile name the terms were carried over from ("" = fitted here)
  bool async_scheduling = true;  ///< how the measured engine ran (vLLM >= 0.14 default)
  bool cuda_graphs = true;       ///< the engine captures CUDA graphs (vLLM default)
  /// Every term except allreduce_latency_s and graphs (those depend on the link and the engine
  /// limits of each scenario).
  EngineOverheads overheads;
  /// All-reduce terms by link kind (GpuSpec::interconnect_kind: "nvlink", "pcie", "xgmi"): the
  /// latency of one call at TP 2, what each further rank adds, and the fraction of the link's
  /// bandwidth reached. A call at TP n costs latency + rank_latency × (n − 2) + bytes / (bw × fraction).
  std::map<std::string, double> allreduce_latency_s;
  std::map<std::string, double> allreduce_rank_latency_s;
  std::map<std::string, double> allreduce_bandwidth_fraction;
  /// Which links' terms rest on a measurement; the others are carried over, named in outputs.
  std::vector<std::string> allreduce_links_measured;
  FrontEndLatency front_end;
  nlohmann::json provenance = nlohmann::json::object();  ///< sources, models, runs, command, commit
  nlohmann::json fit = nlohmann::json::object();         ///< residuals per run, median errors

  /// The all-reduce latency of one call over `link` at TP `tp`, and whether the link's terms were
  /// measured; for a link kind the profile lacks, the largest known figures (never optimistic by
  /// picking the smallest).
  double allreduce_latency_for(const std::string& link, int64_t tp, bool* measured = nullptr) const;
  /// The bandwidth fraction for `link` (the smallest known one for a link the profile lacks; 1 if none).
  double allreduce_bandwidth_fraction_for(const std::string& link) const;
  /// "vllm 0.15.1 engine profile vllm-0.15-h100-sxm (fitted to 20 runs on h100-sxm)" and the like.
  std::string describe() const;
};

nlohmann::json engine_profile_to_json(const EngineProfile& p);
/// Strict read: InputError naming `origin` and the JSON pointer of anything malformed.
EngineProfile engine_profile_from_json(const nlohmann::json& j, const std::string& origin);
EngineProfile read_engine_profile_file(const std::string& path);
void write_engine_profile_file(const EngineProfile& p, const std::string& path);

/// Profiles shipped inside the binary (scenarios/engine-profiles/*.json, embedded at build time).
const std::vector<EngineProfile>& shipped_engine_profiles();
/// The shipped profile for this engine on this GPU: one fitted there first, else one carried
/// over to it; nullopt when none (the caller says so).
std::optional<EngineProfile> find_shipped_engine_profile(const std::string& engine, const std::string& gpu);
/// A shipped profile by name, or a profile file by path; InputError naming `where` when neither.
EngineProfile load_engine_profile(const std::string& name_or_path, const std::string& where);

}  // namespace kvcap
