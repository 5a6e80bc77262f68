#pragma once
// Pieces of kvcap-gpu-calibrate shared by its .cu files: owned device buffers, event timing
// (warm-up, then the median of repeats), and the stages' entry points.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/calibrate/raw_measurements.hpp"
#include "kernels/calibrate/sweep_plan.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/kernels.cuh"

namespace kvcap::kern {

/// cudaMalloc'd bytes, freed on scope exit (plain allocations: never managed memory).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes) CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  template <typename T = void>
  T* get() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

template <typename T>
DeviceBuffer to_device(const std::vector<T>& v) {
  DeviceBuffer b(v.size() * sizeof(T));
  if (!v.empty()) CUDA_CHECK(cudaMemcpy(b.get(), v.data(), b.bytes(), cudaMemcpyHostToDevice));
  return b;
}
template <typename T>
void to_host(const DeviceBuffer& b, std::vector<T>& v) {
  if (!v.empty()) CUDA_CHECK(cudaMemcpy(v.data(), b.get(), v.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

/// Median seconds per call of `launch(i)`: `warmup` untimed calls, then `repeats` rounds of
/// `per_round` calls each between two events (a round amortises event resolution over short kernels).
template <typename F>
double time_median_s(F&& launch, int warmup, int repeats, int per_round) {
  for (int i = 0; i < warmup; ++i) launch(i);
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    CUDA_CHECK(cudaEventRecord(a));
    for (int i = 0; i < per_round; ++i) launch(r * per_round + i);
    CUDA_CHECK(cudaEventRecord(b));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(static_cast<double>(ms) * 1e-3 / per_round);
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

using DecodeLauncher = void (*)(const PagedKvView&, QoType, const uint16_t*, int32_t, float, const DecodePlan&, uint16_t*,
                                void*, cudaStream_t);
using AppendLauncher = void (*)(const PagedKvView&, QoType, const uint16_t*, const uint16_t*, const int64_t*, int64_t,
                                cudaStream_t);
/// The kernels of a variant (kKernelVariants); vec_spread appends with vec's kernel.
inline DecodeLauncher decode_launcher(const std::string& variant) {
  if (variant == kBaselineVariant) return launch_paged_decode;
  if (variant == kVecVariant) return launch_paged_decode_vec;
  if (variant == kVecSpreadVariant) return launch_paged_decode_vec_spread;
  throw std::invalid_argument("no decode kernel for variant '" + variant + "'");
}
inline AppendLauncher append_launcher(const std::string& variant) {
  if (variant == kBaselineVariant) return launch_quantize_append;
  if (variant == kVecVariant || variant == kVecSpreadVariant) return launch_quantize_append_vec;
  throw std::invalid_argument("no append kernel for variant '" + variant + "'");
}

struct HarnessOptions {
  std::string out;
  std::string gpu_id;
  std::string clocks;
  std::string git_commit;
  bool quick = false;       ///< fewer sweep points (smoke test)
  bool check_only = false;  ///< stop after the checks
  bool synthetic = false;   ///< no GPU: write synthetic_raw_run's made-up records (dry run)
  std::string clocks_log;   ///< nvidia-smi samples "SM MHz, memory MHz" per line, taken while this runs
  double sweep_budget_s = 300;
  SweepShape shape;
};

/// Kernel-vs-CPU-reference checks of one kernel variant ("baseline" or "vec") on fresh random
/// inputs; appends one RawCheck per check, tagged with the variant.
void run_checks(uint64_t seed, const std::string& variant, RawRun& run);
/// Wait for the default stream, at most `seconds`. A kernel still running then is hung: nothing
/// else can run on this GPU and freeing its buffers would wait forever, so g_on_hang (which the
/// harness sets to write the raw file with the failure) is called and the process ends at once
/// with the exit code it returns (3 without one). CUDA errors throw as CUDA_CHECK does.
void sync_within(double seconds, const std::string& what);
/// Called by sync_within before it ends the process; returns the exit code. Set by main.
extern std::function<int(const std::string&)> g_on_hang;
/// HBM copy ceiling.
void run_copy_bench(RawRun& run);
/// cuBLASLt GEMMs at the model's shapes, bf16 and fp8. Returns what was left out ("" if nothing):
/// points past `deadline_s` (harness_elapsed_s), or ones cuBLASLt refused.
std::string run_gemm_bench(const HarnessOptions& opt, double deadline_s, RawRun& run);
/// Paged decode and quantize-append timing sweep of one kernel variant; `checkpoint` runs after
/// each KV dtype (it rewrites the raw file). A non-baseline variant is timed only for the KV
/// dtypes whose checks it passed (RawRun::variant_usable). Returns what the deadline left out
/// ("" if nothing).
std::string run_kernel_sweep(const HarnessOptions& opt, const std::string& variant, int sm_count, int64_t l2_bytes,
                             double deadline_s, RawRun& run, const std::function<void()>& checkpoint);

/// Seconds since the harness started (steady clock), for the sweep's time budget.
double harness_elapsed_s();

}  // namespace kvcap::kern
