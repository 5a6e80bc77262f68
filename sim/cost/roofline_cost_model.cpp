#include "sim/cost/roofline_cost_model.hpp"

#include "sim/util/error.hpp"

namespace kvcap {

bool kv_dtype_is_quantized(DType t) {
  return t == DType::fp8_e4m3 || t == DType::fp8_e5m2 || t == DType::int8 || t == DType::int4;
}

CostCoefficients roofline_coefficients(const GpuSpec& gpu, const RooflineEfficiency& eff, DType kv_dtype,
                                       bool fp8_weights) {
  const std::string where = "gpu '" + gpu.id + "'";
  if (!(gpu.bf16_flops > 0)) throw InputError(where, "roofline cost model needs bf16_flops > 0");
  if (!(gpu.hbm_bandwidth_bytes_per_s > 0))
    throw InputError(where, "roofline cost model needs hbm_bandwidth_bytes_per_s > 0");
  CostCoefficients c;
  const double linear_peak = (fp8_weights && gpu.fp8_flops > 0) ? gpu.fp8_flops : gpu.bf16_flops;
  c.peak_flops = linear_peak;
  c.peak_hbm_bytes_per_s = gpu.hbm_bandwidth_bytes_per_s;
  c.linear_flops_per_s = linear_peak * eff.compute;
  c.linear_bytes_per_s = gpu.hbm_bandwidth_bytes_per_s * eff.memory;
  c.attention_flops_per_s = gpu.bf16_flops * eff.compute;
  c.kv_write_bytes_per_s = gpu.hbm_bandwidth_bytes_per_s * eff.memory;
  c.kv_read_bytes_per_s = c.kv_write_bytes_per_s;
  if (kv_dtype_is_quantized(kv_dtype)) c.kv_read_bytes_per_s /= 1.0 + eff.kv_dequant_overhead;
  if (!(gpu.host_link_bytes_per_s > 0)) throw InputError(where, "roofline cost model needs host_link_bytes_per_s > 0");
  c.host_link_bytes_per_s = gpu.host_link_bytes_per_s;
  // A single-GPU replica never all-reduces, so only TP > 1 needs the link figure (the factory
  // checks it there); 1 keeps the division finite.
  c.interconnect_bytes_per_s = gpu.interconnect_bytes_per_s > 0 ? gpu.interconnect_bytes_per_s * eff.interconnect : 1.0;
  c.step_overhead_s = eff.step_overhead_s;
  return c;
}

}  // namespace kvcap
