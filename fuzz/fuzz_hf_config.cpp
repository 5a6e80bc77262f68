// HuggingFace config.json (sim/model/hf_config.cpp, with quantization_config from
// sim/model/quant_config.cpp and vision towers from sim/model/vision_encoder.cpp): the fuzz input
// is the file's text, read as `kvcap memory --model config.json` reads it.
//
// Two harnesses: `hf_config` stops at the ModelSpec; `model_memory` goes
// on as `kvcap memory --model config.json --gpu h100-sxm` does with the spec the reader accepted:
// parameter counts and the whole vLLM memory budget at default settings. A spec the reader lets
// through must not overflow, divide by zero or hang there.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/harnesses.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/json_parse.hpp"

using namespace kvcap;

int fuzz::hf_config_input(bool price_memory, const uint8_t* data, size_t size) {
  return fuzz::expect_input_errors([&] {
    const std::string origin = "config.json";
    const ModelSpec model = model_from_hf_config(parse_json_text(fuzz::as_text(data, size), origin), origin);
    if (!price_memory) return;
    static const GpuSpec gpu = load_gpu("h100-sxm");
    (void)count_parameters(model);
    EngineMemoryConfig config;
    if (model.has_compressed_attention()) config.kv_cache_dtype = "fp8";  // DeepSeek-V4's only cache format
    (void)compute_memory_budget(model, gpu, config);
  });
}
