#pragma once
// Accelerator data sheets: the catalog (catalog/gpus/*.json, each figure with its source) and
// user overrides from the CLI or a JSON file.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kvcap {

struct GpuSpec {
  std::string id;                   ///< catalog id, lower case ("h200")
  std::string name;                 ///< marketing name ("NVIDIA H200 SXM 141GB")
  int64_t memory_bytes = 0;         ///< HBM capacity
  double hbm_bandwidth_bytes_per_s = 0;
  double bf16_flops = 0;            ///< dense (no sparsity) peak
  double fp8_flops = 0;             ///< dense peak; 0 where the GPU has no FP8 tensor cores
  double int8_ops = 0;              ///< dense peak
  double host_link_bytes_per_s = 0; ///< GPU<->CPU per direction (PCIe/C2C), for the swap tier
  double interconnect_bytes_per_s = 0; ///< GPU<->GPU per direction (NVLink/xGMI/PCIe), for TP all-reduce
  double price_per_gpu_hour_usd = 0;   ///< default list/cloud price used by sizing reports
  /// GPU-to-GPU link kind: "nvlink" (NVLink/NVSwitch), "pcie" (no GPU link: peer traffic over
  /// PCIe), "xgmi" (AMD Infinity Fabric). Engine profiles give the all-reduce latency per kind.
  std::string interconnect_kind = "pcie";
  /// What vLLM sizes from: torch.cuda.mem_get_info's total, a few hundred MiB below nvidia-smi's
  /// (memory reserved by the driver). 0 = not measured for this GPU: memory_bytes is used.
  int64_t visible_memory_bytes = 0;
  /// CUDA compute capability x 10 (90 = Hopper, 100 = datacenter Blackwell, 120 = GeForce
  /// Blackwell); 0 for non-NVIDIA parts. vLLM picks some kernel alignments by it.
  int compute_capability = 0;
  /// Streaming multiprocessors (compute units on AMD parts); 0 = not recorded. vLLM sizes the
  /// Triton top-k/top-p sampler's buffer by it (activation.hpp, ProfileSampler::triton).
  int64_t sm_count = 0;
};

/// Look up a catalog id (case-insensitive) or read a GPU JSON file; InputError when unknown.
GpuSpec load_gpu(const std::string& id_or_path);
/// All catalog entries (catalog/gpus/*.json), in file-name order.
const std::vector<GpuSpec>& gpu_catalog();
/// (alias, catalog id): the other names users type for a catalog GPU, normalized as the lookup
/// normalizes them ("h100", "a100-sxm4-80gb"). Only names of the same part: an "A100 80GB PCIe"
/// (1.94 TB/s, 300 W) is not the catalog's SXM4 A100, so it is not listed.
const std::vector<std::pair<std::string, std::string>>& gpu_catalog_aliases();

/// A GPU described in JSON: either every field below, or `"base": "<catalog id>"` plus the fields
/// to override. Keys: base, id, name, memory_bytes, hbm_bandwidth_bytes_per_s, bf16_flops,
/// fp8_flops, int8_ops, host_link_bytes_per_s, interconnect_bytes_per_s, price_per_gpu_hour_usd,
/// interconnect_kind, visible_memory_bytes (0 = same as memory_bytes; a new memory_bytes without
/// it resets it to 0), compute_capability (e.g. 90; 0 = not NVIDIA), sm_count (0 = not recorded).
/// Unknown keys and non-positive sizes are InputErrors naming the field.
GpuSpec gpu_from_json(const nlohmann::json& obj, const std::string& origin);

/// InputError naming `where` unless memory, bandwidth and bf16 FLOP/s are positive and the other
/// figures non-negative (fp8_flops 0 = no FP8 tensor cores; price 0 = unknown).
void validate_gpu(const GpuSpec& gpu, const std::string& where);

}  // namespace kvcap
