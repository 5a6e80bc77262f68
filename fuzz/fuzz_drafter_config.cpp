// A speculative-decoding drafter's config.json (sim/model/drafter_spec.cpp), read as `kvcap memory
// --speculative-config '{"method": "dflash", "model": FILE, ...}'` reads it, then priced beside a
// target as the memory budget prices it (sim/memory/drafter_memory.cpp) and put through the whole
// budget with the shipped DFlash2 rows' target: a drafter the reader accepts must not overflow,
// divide by zero or hang there.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/harnesses.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/drafter_memory.hpp"
#include "sim/memory/kv_format.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/drafter_spec.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/json_parse.hpp"

using namespace kvcap;

int fuzz::drafter_config_input(const uint8_t* data, size_t size) {
  return fuzz::expect_input_errors([&] {
    const std::string origin = "drafter.json";
    const DrafterSpec d = drafter_from_hf_config(parse_json_text(fuzz::as_text(data, size), origin), origin);
    static const ModelSpec target = load_model(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/nvidia--Qwen3.6-27B-NVFP4.json");
    static const GpuSpec gpu = load_gpu("rtx-5090");
    for (int64_t tp : {1, 2, 8}) {
      (void)drafter_weight_bytes_per_gpu(d, target, tp, DType::bf16);
      (void)drafter_kv_bytes_per_token_layer(d, KvFormat{}, tp);
    }
    (void)drafter_aux_hidden_bytes_per_gpu(d, target, 8192, DType::bf16);
    EngineMemoryConfig c;
    c.tensor_parallel_size = 2;
    c.vllm_version = "0.27.1";
    c.quantization = "fp8-block";
    c.max_model_len = 65536;
    c.max_num_seqs = 1;
    c.max_num_batched_tokens = 8192;
    c.num_speculative_tokens = 7;
    c.drafter = d;
    (void)compute_memory_budget(target, gpu, c);
  });
}
