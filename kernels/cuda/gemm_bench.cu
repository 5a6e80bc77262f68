// Linear-layer cost: cuBLASLt GEMMs (cases in kernels/calibrate/sweep_plan: a square 8192³
// ceiling, the model's QKV, O, MLP gate/up and down, lm_head for the token counts a step can
// have, MoE experts), bf16 and fp8 e4m3 where cuBLASLt has an algorithm, and the HBM copy
// ceiling. Weights rotate over copies so each launch streams them from HBM, as a forward pass does.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/cuda/harness.cuh"
#include "kernels/cuda/kernels.cuh"

namespace kvcap::kern {

namespace {

class LtGemm {
 public:
  LtGemm() {
    CUBLAS_CHECK(cublasLtCreate(&handle_));
    workspace_ = DeviceBuffer(kWorkspace);
  }
  ~LtGemm() { cublasLtDestroy(handle_); }
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  /// Prepare D[m×n] = A[m×k] · W[n×k]ᵀ (row-major), i.e. column-major Dᵀ = W · Aᵀ with W
  /// transposed ("TN", the layout cuBLASLt requires for fp8). False when no algorithm exists.
  bool plan(int64_t m, int64_t n, int64_t k, bool fp8) {
    release();
    const cudaDataType_t in = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, in, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, in, static_cast<uint64_t>(k), static_cast<uint64_t>(m), k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_, CUDA_R_16BF, static_cast<uint64_t>(n), static_cast<uint64_t>(m), n));
    cublasLtMatmulPreference_t pref;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = kWorkspace;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, d_, d_, pref, 1, &heuristic_, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    return st == CUBLAS_STATUS_SUCCESS && found > 0;
  }

  /// Status of the launch: a heuristic's algorithm can still be refused here (fp8 layouts).
  cublasStatus_t try_run(const void* w, const void* a, void* d) {
    const float alpha = 1.0f, beta = 0.0f;
    return cublasLtMatmul(handle_, op_, &alpha, w, a_, a, b_, &beta, d, d_, d, d_, &heuristic_.algo,
                          workspace_.get(), kWorkspace, nullptr);
  }
  void run(const void* w, const void* a, void* d) { CUBLAS_CHECK(try_run(w, a, d)); }

 private:
  void release() {
    if (op_) cublasLtMatmulDescDestroy(op_);
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (d_) cublasLtMatrixLayoutDestroy(d_);
    op_ = nullptr;
    a_ = b_ = d_ = nullptr;
  }
  static constexpr size_t kWorkspace = size_t{64} << 20;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  DeviceBuffer workspace_;
};

}  // namespace

void run_copy_bench(RawRun& run) {
  const size_t bytes = size_t{2} << 30;  // 2 GiB each way: ~35 × a 60 MB L2
  DeviceBuffer src(bytes), dst(bytes);
  launch_fill_random(src.get<uint8_t>(), static_cast<int64_t>(bytes), KvStorage::kINT8, 3, nullptr);
  auto launch = [&](int) { CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice)); };
  const double t = time_median_s(launch, 2, 10, 1);
  run.copy.push_back({static_cast<int64_t>(2 * bytes), t});
  std::printf("copy   %lld MiB  %9.2f us  %7.1f GB/s (read + write)\n", static_cast<long long>(bytes >> 20), t * 1e6,
              2.0 * static_cast<double>(bytes) / t * 1e-9);
}

std::string run_gemm_bench(const HarnessOptions& opt, double deadline_s, RawRun& run) {
  const std::vector<GemmCase> cases = gemm_cases(opt.shape, opt.quick);
  DeviceBuffer w(static_cast<size_t>(kGemmWeightArenaBytes)), a(static_cast<size_t>(kGemmActArenaBytes)),
      d(static_cast<size_t>(kGemmOutArenaBytes));
  LtGemm gemm;
  int refused = 0;
  for (bool fp8 : {false, true}) {
    const char* dtype = fp8 ? "fp8_e4m3" : "bf16";
    launch_fill_random(w.get<uint8_t>(), kGemmWeightArenaBytes, fp8 ? KvStorage::kFP8E4M3 : KvStorage::kBF16, 21, nullptr);
    launch_fill_random(a.get<uint8_t>(), kGemmActArenaBytes, fp8 ? KvStorage::kFP8E4M3 : KvStorage::kBF16, 22, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (const GemmCase& g : cases) {
      if (harness_elapsed_s() > deadline_s) {
        std::printf("gemm   time budget reached: stopping before %s %s m=%lld\n", g.name.c_str(), dtype,
                    static_cast<long long>(g.m));
        return "GEMM time budget reached before " + g.name + " " + dtype + " m=" + std::to_string(g.m) +
               "; later GEMM points not measured";
      }
      if (!gemm_fits_arenas(g, fp8)) continue;
      if (!gemm.plan(g.m, g.n, g.k, fp8)) {
        std::printf("gemm   %-11s %-8s m=%lld: no cuBLASLt algorithm, skipped\n", g.name.c_str(), dtype,
                    static_cast<long long>(g.m));
        continue;
      }
      // One untimed probe: an algorithm the heuristic offered can still be refused at launch
      // (fp8 layout rules); that point is skipped, not the whole run.
      const cublasStatus_t probe = gemm.try_run(w.get(), a.get(), d.get());
      if (probe != CUBLAS_STATUS_SUCCESS) {
        std::printf("gemm   %-11s %-8s m=%lld: cuBLASLt refused the launch (status %d), skipped\n", g.name.c_str(),
                    dtype, static_cast<long long>(g.m), static_cast<int>(probe));
        ++refused;
        continue;
      }
      CUDA_CHECK(cudaDeviceSynchronize());
      RawGemm r = gemm_record(g, fp8);
      const int64_t stride = (g.n * g.k * (fp8 ? 1 : 2) + 255) / 256 * 256;  // 256-byte aligned weights
      if (g.launches > 1) {
        // MoE: each touched expert's own weights, one launch each, timed together.
        auto launch = [&](int) {
          for (int64_t e = 0; e < g.launches; ++e) gemm.run(w.get<uint8_t>() + e * stride, a.get(), d.get());
        };
        r.time_s = time_median_s(launch, 1, 7, 1);
      } else {
        // Rotate weight copies so the set exceeds L2 and each launch streams its weights from HBM.
        const int64_t copies = std::max<int64_t>(1, std::min<int64_t>(8, kGemmWeightArenaBytes / stride));
        auto launch = [&](int i) { gemm.run(w.get<uint8_t>() + (i % copies) * stride, a.get(), d.get()); };
        r.time_s = time_median_s(launch, 3, 10, static_cast<int>(std::max<int64_t>(copies, 2)));
      }
      run.gemm.push_back(r);
      std::printf("gemm   %-11s %-8s m=%5lld n=%6lld k=%5lld x%-3lld %9.2f us  %7.1f TFLOP/s  %7.1f GB/s\n",
                  g.name.c_str(), dtype, static_cast<long long>(g.m), static_cast<long long>(g.n),
                  static_cast<long long>(g.k), static_cast<long long>(g.launches), r.time_s * 1e6,
                  r.flops / r.time_s * 1e-12, r.bytes / r.time_s * 1e-9);
    }
    std::fflush(stdout);
  }
  // Refused points are a property of cuBLASLt on this GPU, not a gap in the run.
  if (refused) std::printf("gemm   %d point(s) refused by cuBLASLt\n", refused);
  return "";
}

}  // namespace kvcap::kern
