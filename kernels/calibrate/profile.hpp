#pragma once
// Calibration profile: what one GPU was measured (or, for a spec-sheet profile, assumed) to do,
// reduced to the effective rates the cost model prices with. The JSON format is documented in
// kernels/NOTES.md ("Profile format"); this header is its only reader and writer.
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kvcap {

/// time ≈ launch_s + work / rate, fitted by least squares (or assumed for spec-sheet profiles).
struct FittedRate {
  double rate = 0;          ///< bytes/s or FLOP/s, effective
  double launch_s = 0;      ///< fixed cost per kernel launch
  double fit_rel_rms = 0;   ///< RMS of (predicted − measured) / measured over the points; 0 if assumed
  int64_t points = 0;       ///< measurements behind the fit; 0 if assumed
};

struct ProfileCoefficients {
  double copy_bytes_per_s = 0;         ///< HBM device-to-device copy (bytes read + written per s)
  FittedRate gemm_compute;             ///< bf16 GEMMs in the compute-bound regime (FLOP/s)
  FittedRate gemm_memory;              ///< bf16 GEMMs in the weight-streaming regime (bytes/s)
  FittedRate gemm_fp8_compute;         ///< fp8 GEMMs (rate 0 = not available)
  std::map<std::string, FittedRate> decode;  ///< paged decode attention per KV dtype name (bytes/s)
  std::map<std::string, FittedRate> append;  ///< KV quantize-append per KV dtype name (bytes/s)
  double step_overhead_s = 0;          ///< host-side cost per step (not measured by kernels: 0)
};

struct Profile {
  int64_t version = 1;
  bool measured = false;          ///< true only when every number came from a run on the GPU
  std::string gpu_id;             ///< kvcap catalog id the profile is for ("h200")
  double spec_bf16_flops = 0;     ///< data-sheet ceilings, for utilizations
  double spec_hbm_bandwidth_bytes_per_s = 0;
  nlohmann::json provenance = nlohmann::json::object();
  nlohmann::json checks = nlohmann::json::array();
  nlohmann::json raw = nlohmann::json::object();
  ProfileCoefficients coefficients;
};

/// KV dtype names the kernels implement (and profiles key their decode/append fits by).
inline constexpr const char* kKernelKvDtypes[] = {"bf16", "fp16", "fp8_e4m3", "int8", "int4"};

nlohmann::json profile_to_json(const Profile& p);
/// Strict read: InputError naming `origin` and the JSON pointer of anything malformed.
Profile profile_from_json(const nlohmann::json& j, const std::string& origin);
Profile read_profile_file(const std::string& path);
/// Write with 2-space indentation and a trailing newline (stable bytes for the same profile).
void write_profile_file(const Profile& p, const std::string& path);

}  // namespace kvcap
