#pragma once
// What kvcap-gpu-calibrate measured, as plain structs (the CUDA harness fills them; nvcc never
// sees JSON) and their JSON form ("kvcap-raw", documented in kernels/NOTES.md).
#include <cstdint>
#include <string>
#include <vector>

namespace kvcap {

struct RawProvenance {
  std::string gpu_id;          ///< kvcap catalog id given on the command line ("h200")
  std::string gpu_name;        ///< as the driver names it
  int64_t gpu_memory_bytes = 0;
  int64_t sm_count = 0;
  int64_t l2_bytes = 0;
  std::string driver_version;  ///< cudaDriverGetVersion, e.g. "13000"
  std::string cuda_runtime_version;
  std::string clocks;          ///< as seen (nvidia-smi line passed by tools/gpu-check), free text
  std::string date_utc;        ///< ISO 8601
  std::string git_commit;
  std::string command;
  uint64_t check_seed = 0;     ///< seed of the fresh random inputs of the checks
  /// Empty when every stage ran to its end; otherwise what is missing and why (time budget
  /// reached, a stage's error, or the harness stopped between checkpoints). Optional in files.
  std::string incomplete;
  /// True for `kvcap-gpu-calibrate --synthetic` (tools/gpu-check --dry-run): made-up timings that
  /// exercise the plumbing; a profile fitted from it is never marked measured. Optional in files.
  bool synthetic = false;
};

/// Kernel variants. "baseline" is the one every profile may be fitted from: its checks must all
/// pass. Others ("vec": 16-byte loads, quantized tiles in shared memory, several tiles in
/// flight; "vec_spread": vec with the softmax/V work spread over all threads) are optional: a variant whose checks fail for a KV dtype is recorded, not timed for
/// that dtype, and never fitted (kernels/NOTES.md, "Variants").
inline constexpr const char* kBaselineVariant = "baseline";
inline constexpr const char* kVecVariant = "vec";
/// vec with the softmax/V phase spread over every row of threads (decode); its append is vec's.
inline constexpr const char* kVecSpreadVariant = "vec_spread";

/// One kernel-vs-reference check.
struct RawCheck {
  std::string kernel;   ///< "paged_decode", "paged_decode_split", "quantize_append"
  std::string variant = kBaselineVariant;  ///< optional in files (older runs had only the baseline)
  std::string kv_dtype;
  std::string qo_dtype;
  int64_t head_dim = 0, page_size = 0, gqa = 0, num_kv_heads = 0;
  std::string layout;
  double rel_error = 0;     ///< max over (sequence, head) rows of ‖gpu − ref‖₂ / ‖ref‖₂ (decode); mismatching bytes / bytes (append)
  double bound = 0;
  bool all_written = false; ///< no poisoned output element survived
  bool finite = false;      ///< no NaN/inf in the output
  bool passed = false;
};

struct RawCopy {
  int64_t bytes = 0;  ///< read + written
  double time_s = 0;
};

struct RawGemm {
  std::string name;   ///< "qkv", "o", "gate_up", "down", "lm_head", "square"
  std::string dtype;  ///< "bf16" | "fp8_e4m3"
  int64_t m = 0, n = 0, k = 0;
  double flops = 0;   ///< 2 m n k
  double bytes = 0;   ///< operands read once + output written once
  double time_s = 0;
};

struct RawDecode {
  std::string kv_dtype;
  std::string variant = kBaselineVariant;  ///< kernel variant timed (optional in files)
  int64_t batch = 0, context = 0, page_size = 0, head_dim = 0, num_q_heads = 0, num_kv_heads = 0;
  int64_t splits = 1;
  double kv_bytes = 0;     ///< K/V data + scales read (one layer)
  double total_bytes = 0;  ///< + queries, outputs, block table, split workspace
  double time_s = 0;
  int64_t allocated_bytes_per_token = 0;  ///< pool bytes per cached token (data + scales, K and V)
  int64_t block_table_bytes = 0;          ///< indptr + indices + last_page_len of one launch
};

struct RawAppend {
  std::string kv_dtype;
  std::string variant = kBaselineVariant;  ///< kernel variant timed (optional in files)
  int64_t tokens = 0, head_dim = 0, num_kv_heads = 0;
  double bytes = 0;  ///< inputs read + stored bytes and scales written
  double time_s = 0;
};

struct RawRun {
  RawProvenance provenance;
  std::vector<RawCheck> checks;
  std::vector<RawCopy> copy;
  std::vector<RawGemm> gemm;
  std::vector<RawDecode> decode;
  std::vector<RawAppend> append;
  /// Every check of every variant passed (and there is at least one).
  bool checks_passed() const;
  /// Every baseline check passed (and there is at least one): what a profile needs. A check
  /// without a variant (a harness error) counts as baseline.
  bool baseline_checks_passed() const;
  /// True when `variant` has checks of `kv_dtype` whose kernel name starts with `kernel_prefix`
  /// ("paged_decode" covers the split check too) and all of them passed. The baseline is
  /// usable whenever baseline_checks_passed().
  bool variant_usable(const std::string& kernel_prefix, const std::string& variant, const std::string& kv_dtype) const;
};

// No JSON types here: the CUDA harness includes this header and nvcc never parses nlohmann/json
// (raw_json.hpp has the JSON form).
/// Written atomically (sim/util/atomic_file.hpp: a temporary sibling, fsync'd and renamed over
/// `path`), so a harness killed mid-write leaves the last complete checkpoint, never a truncated
/// file. InputError naming the file when it cannot be written.
void write_raw_file(const RawRun& r, const std::string& path);
/// Strict read; InputError naming the file and the field for anything malformed.
RawRun read_raw_file(const std::string& path);

}  // namespace kvcap
