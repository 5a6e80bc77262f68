#include "sim/cost/roofline_profile.hpp"

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

Profile make_roofline_profile(const GpuSpec& gpu, const RooflineEfficiency& eff, const std::string& model,
                              const std::string& command) {
  if (!(gpu.bf16_flops > 0 && gpu.hbm_bandwidth_bytes_per_s > 0))
    throw InputError("gpu " + quote_input(gpu.id), "a roofline profile needs bf16_flops and hbm_bandwidth_bytes_per_s > 0");
  Profile p;
  p.measured = false;
  p.gpu_id = gpu.id;
  p.spec_bf16_flops = gpu.bf16_flops;
  p.spec_hbm_bandwidth_bytes_per_s = gpu.hbm_bandwidth_bytes_per_s;
  // No date: regenerating the shipped profiles gives identical bytes.
  p.provenance = {{"source", "spec sheet: kvcap GPU catalog (catalog/gpus) x roofline efficiencies"},
                  {"note", "NOT measured on a GPU; every rate is a data-sheet peak times an efficiency factor"},
                  {"gpu_name", gpu.name},
                  {"model", model},
                  {"kvcap_version", KVCAP_VERSION},
                  {"command", command},
                  {"efficiencies",
                   {{"compute", eff.compute},
                    {"memory", eff.memory},
                    {"kv_dequant_overhead", eff.kv_dequant_overhead},
                    {"step_overhead_s", eff.step_overhead_s}}}};
  auto& c = p.coefficients;
  const double mem = gpu.hbm_bandwidth_bytes_per_s * eff.memory;
  c.copy_bytes_per_s = mem;
  c.gemm_compute = {gpu.bf16_flops * eff.compute, 0, 0, 0};
  c.gemm_memory = {mem, 0, 0, 0};
  c.gemm_fp8_compute = {gpu.fp8_flops * eff.compute, 0, 0, 0};
  for (const char* dtype : {"bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8", "int4"}) {
    const bool quantized = std::string(dtype) != "bf16" && std::string(dtype) != "fp16";
    c.decode[dtype] = {quantized ? mem / (1.0 + eff.kv_dequant_overhead) : mem, 0, 0, 0};
    c.append[dtype] = {mem, 0, 0, 0};
  }
  c.step_overhead_s = eff.step_overhead_s;
  return p;
}

}  // namespace kvcap
