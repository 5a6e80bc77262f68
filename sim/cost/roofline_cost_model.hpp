#pragma once
// Spec-sheet roofline: rates = data-sheet peak × an efficiency factor. Not measured on a GPU.
#include <string>

#include "sim/cost/cost_model.hpp"
#include "sim/cost/cost_shape.hpp"
#include "sim/cost/step_pricing.hpp"
#include "sim/hw/gpu_spec.hpp"

namespace kvcap {

/// Efficiency factors of the roofline; the scenario's cost_model object may set each.
/// Defaults and their sources (shared/reference/style-and-kernel-anchors.md, .library KINDS.md):
struct RooflineEfficiency {
  /// Achieved / peak dense bf16 matmul rate. 0.80: an 8192³ bf16 GEMM ran at 769–798 TFLOP/s on
  /// random data on an H200 of this workplace (KINDS.md, 2026-10-28/11-04) against the 989 TFLOP/s
  /// data-sheet peak: 788 / 989 ≈ 0.80.
  double compute = 0.80;
  /// Achieved / peak HBM bandwidth of a good paged decode kernel at long KV. 0.85: FlashAttention-2
  /// and vLLM PagedAttention v2 on H100 SXM at long KV (FlashInfer blog 2024-02, anchors B2;
  /// FlashInfer itself reaches ~0.88–0.89).
  double memory = 0.85;
  /// Extra memory time of reading quantized KV (fp8/int8/int4) relative to its byte count.
  /// 0.17: FlashInfer fp8 decode at 64K on H100 reached η 0.76 against 0.89 for fp16
  /// (anchors B3): 0.89 / 0.76 − 1 ≈ 0.17.
  double kv_dequant_overhead = 0.17;
  /// Achieved / nominal interconnect bandwidth for the TP all-reduce. 1.0 (ideal): no published
  /// figure in the anchors; set it from a measurement.
  double interconnect = 1.0;
  /// Fixed host/launch cost per step. 0: no published figure in the anchors; set it from a
  /// measurement (kvcap calibrate fits it from kernel launch overheads).
  double step_overhead_s = 0.0;
};

/// Rates for `gpu` under `eff`. Linear layers run at the FP8 peak when the weights are FP8 and
/// the GPU has FP8 tensor cores, else at the bf16 peak. InputError when a needed figure is 0.
CostCoefficients roofline_coefficients(const GpuSpec& gpu, const RooflineEfficiency& eff, DType kv_dtype,
                                       bool fp8_weights);

class RooflineCostModel final : public CostModel {
 public:
  RooflineCostModel(ModelCostShape shape, CostCoefficients coefficients, std::string description)
      : shape_(std::move(shape)), coeff_(coefficients), description_(std::move(description)) {}
  StepCost price(const StepComposition& step) const override { return price_step(shape_, coeff_, engine_, step); }
  bool prepare_decode(int64_t decode_requests, DecodeBatchPricing& out) const override {
    prepare_decode_batch(shape_, coeff_, engine_, decode_requests, out);
    return true;
  }
  std::string describe() const override { return description_; }
  bool measured() const override { return false; }

  const ModelCostShape& shape() const { return shape_; }
  const CostCoefficients& coefficients() const { return coeff_; }
  UtilizationCeiling utilization_ceiling() const override { return kvcap::utilization_ceiling(coeff_); }
  /// Engine terms priced on top of the kernels (default: none).
  void set_engine(const EngineOverheads& e) { engine_ = e; }
  const EngineOverheads& engine() const { return engine_; }

 private:
  ModelCostShape shape_;
  CostCoefficients coeff_;
  EngineOverheads engine_;
  std::string description_;
};

/// True for KV storage formats that need dequantization in the attention kernel.
bool kv_dtype_is_quantized(DType t);

}  // namespace kvcap
