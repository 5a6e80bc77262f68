// Reading HuggingFace config.json files: every architecture's conventions, and refusals of bad
// input with the field named.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/memory/kv_format.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/json_fields.hpp"
#include "test_helpers.hpp"

using namespace kvcap;
using nlohmann::json;

namespace {


json llama_like() {
  return json::parse(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":1024,
    "intermediate_size":4096,"num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,
    "vocab_size":1000,"max_position_embeddings":2048,"torch_dtype":"bfloat16"})");
}

std::string error_for(const json& cfg) {
  return test::input_error_of([&] { model_from_hf_config(cfg, "cfg.json"); });
}

}  // namespace

TEST_CASE("every catalog model loads, case-insensitively, with consistent layer lists") {
  CHECK(model_catalog_names().size() == 23);
  for (const auto& name : model_catalog_names()) {
    CAPTURE(name);
    const ModelSpec m = load_model(name);
    CHECK(m.name == name);
    CHECK(static_cast<int64_t>(m.layers.size()) == m.num_layers);
    CHECK(m.head_dim > 0);
    CHECK(m.num_kv_heads > 0);
  }
  CHECK(load_model("Llama-3.1-8B").num_layers == 32);
}

TEST_CASE("unknown model names and unreadable files are refused, naming what is accepted") {
  auto e = test::input_error_of([] { load_model("llama-9"); });
  CHECK(test::contains(e, "llama-9"));
  CHECK(test::contains(e, "llama-3.1-8b"));
  auto path = test::write_temp("malformed.json", "{\"architectures\": [\"LlamaForCausalLM\"],\n \"hidden_size\": }");
  e = test::input_error_of([&] { load_model(path); });
  CHECK(test::contains(e, path + ":2:"));  // file:line:col of the syntax error
  std::filesystem::remove(path);
}

TEST_CASE("attention kinds per layer") {
  SUBCASE("Gemma-2 alternates sliding (4,096) and global, starting with a sliding layer") {
    const ModelSpec m = load_model("gemma-2-9b");
    CHECK(m.layers[0].attention == AttentionKind::sliding_window);
    CHECK(m.layers[0].sliding_window == 4096);
    CHECK(m.layers[1].attention == AttentionKind::full);
    CHECK(test::count_kind(m, AttentionKind::sliding_window) == 21);
    CHECK(m.tie_word_embeddings);  // Gemma2Config default
    CHECK(m.norms_per_layer == 4);
  }
  SUBCASE("GPT-OSS follows layer_types: 12 sliding (128) + 12 full, sinks, mxfp4 experts") {
    const ModelSpec m = load_model("gpt-oss-20b");
    CHECK(test::count_kind(m, AttentionKind::sliding_window) == 12);
    CHECK(test::count_kind(m, AttentionKind::full) == 12);
    CHECK(m.layers[0].sliding_window == 128);
    CHECK(m.attention_sinks);
    CHECK(m.quant.method == "mxfp4");
    CHECK(m.quant.experts_only);
    CHECK(m.moe.num_experts == 32);
    CHECK(m.moe.experts_per_token == 4);
    CHECK(m.dtype == DType::bf16);  // no torch_dtype in the config: bf16
  }
  SUBCASE("Mistral-7B-v0.1 and Phi-3-mini slide on every layer") {
    CHECK(test::count_kind(load_model("mistral-7b"), AttentionKind::sliding_window) == 32);
    const ModelSpec phi = load_model("phi-3-mini");
    CHECK(test::count_kind(phi, AttentionKind::sliding_window) == 32);
    CHECK(phi.layers[5].sliding_window == 2047);
  }
  SUBCASE("Qwen2.5 declares a window but use_sliding_window is false: all full") {
    CHECK(test::count_kind(load_model("qwen2.5-7b"), AttentionKind::full) == 28);
    CHECK(test::count_kind(load_model("mixtral-8x7b"), AttentionKind::full) == 32);  // sliding_window null
  }
  SUBCASE("Qwen2 with use_sliding_window slides on layers >= max_window_layers") {
    json c = llama_like();
    c["architectures"] = {"Qwen2ForCausalLM"};
    c["use_sliding_window"] = true;
    c["sliding_window"] = 512;
    c["max_window_layers"] = 3;
    const ModelSpec m = model_from_hf_config(c, "q.json");
    CHECK(m.layers[2].attention == AttentionKind::full);
    CHECK(m.layers[3].attention == AttentionKind::sliding_window);
    CHECK(m.qkv_bias);
  }
  SUBCASE("DeepSeek-V3: MLA everywhere, 3 dense layers then MoE with a shared expert, fp8 blocks") {
    const ModelSpec m = load_model("deepseek-v3");
    CHECK(test::count_kind(m, AttentionKind::mla) == 61);
    CHECK(m.mla.kv_lora_rank == 512);
    CHECK(m.mla.qk_rope_head_dim == 64);
    CHECK(!m.layers[2].moe);
    CHECK(m.layers[3].moe);
    CHECK(m.moe.num_experts == 256);
    CHECK(m.moe.num_shared_experts == 1);
    CHECK(m.moe.shared_expert_intermediate_size == 2048);
    CHECK(m.quant.method == "fp8");
    CHECK(m.quant.group_size == 128 * 128);
    CHECK(m.num_mtp_layers == 1);
  }
}

TEST_CASE("malformed, incomplete or unsupported configs are InputErrors naming the field") {
  CHECK(error_for(llama_like()).empty());
  {
    json c = llama_like();
    c["architectures"] = {"MambaForCausalLM"};
    auto e = error_for(c);
    CHECK(test::contains(e, "MambaForCausalLM"));
    CHECK(test::contains(e, "/architectures"));
  }
  {
    json c = llama_like();
    c.erase("hidden_size");
    CHECK(test::contains(error_for(c), "/hidden_size: required field is missing"));
  }
  {
    json c = llama_like();
    c["num_hidden_layers"] = 0;
    CHECK(test::contains(error_for(c), "/num_hidden_layers"));
  }
  {
    json c = llama_like();
    c["vocab_size"] = -5;
    CHECK(test::contains(error_for(c), "/vocab_size"));
  }
  {
    json c = llama_like();
    c["intermediate_size"] = "big";
    CHECK(test::contains(error_for(c), "/intermediate_size"));
  }
  {
    json c = llama_like();
    c["num_key_value_heads"] = 3;  // does not divide 8 heads
    CHECK(test::contains(error_for(c), "/num_key_value_heads"));
  }
  {
    json c = llama_like();
    c["num_attention_heads"] = 7;  // 1024 / 7 is not whole and no head_dim given
    c["num_key_value_heads"] = 7;
    CHECK(test::contains(error_for(c), "/num_attention_heads"));
  }
  {
    json c = llama_like();
    c["layer_types"] = {"full_attention", "sliding_attention"};  // 2 entries for 4 layers
    CHECK(test::contains(error_for(c), "/layer_types"));
    c["layer_types"] = {"full_attention", "linear_attention", "full_attention", "full_attention"};
    CHECK(test::contains(error_for(c), "/layer_types/1"));
    c["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "full_attention"};
    CHECK(test::contains(error_for(c), "/sliding_window"));  // sliding layers need a window
  }
  {
    json c = llama_like();
    c["quantization_config"] = {{"quant_method", "bitsandbytes"}};
    CHECK(test::contains(error_for(c), "/quantization_config/quant_method"));
  }
  {
    json c = llama_like();
    c["torch_dtype"] = "int8";
    CHECK(test::contains(error_for(c), "/torch_dtype"));
  }
  CHECK(test::contains(error_for(json::array()), "expected a JSON object"));
}

TEST_CASE("every sample config in ../shared/models reads, with the published KV figures") {
  const std::filesystem::path dir = std::filesystem::path(KVCAP_SHARED_DIR) / "models";
  if (!std::filesystem::is_directory(dir)) {
    MESSAGE("skipped: " << dir.string() << " is absent");
    return;
  }
  int read = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    const ModelSpec m = load_model(entry.path().string());
    CHECK(m.num_layers > 0);
    ++read;
  }
  CHECK(read >= 4);
  const KvFormat bf16{DType::bf16, 64, 16};
  auto kv = [&](const char* file) { return kv_bytes_per_token(load_model((dir / file).string()), bf16); };
  CHECK(kv("Llama-3.1-8B.json") == 131072);
  CHECK(kv("Mixtral-8x7B-v0.1.json") == 131072);
  // DeepSeek-V2-Lite: MLA, 27 layers x (512 + 64) x 2 B = 31,104.
  CHECK(kv("DeepSeek-V2-Lite.json") == 31104);
  CHECK(kv("gemma-2-9b.json") == 344064);
  // A user's copy of a config and the catalog entry are read by the same code: same counts.
  CHECK(count_parameters(load_model((dir / "Llama-3.1-8B.json").string())).total ==
        count_parameters(load_model("llama-3.1-8b")).total);
  // DeepSeek-V2-Lite has no q_lora_rank (queries are not low-rank) and 1 dense layer.
  const ModelSpec lite = load_model((dir / "DeepSeek-V2-Lite.json").string());
  CHECK(lite.mla.q_lora_rank == 0);
  CHECK(!lite.layers[0].moe);
  CHECK(lite.layers[1].moe);
  // A directory holding config.json is accepted too.
  auto sub = std::filesystem::temp_directory_path() / ("kvcap_model_dir_" + std::to_string(::getpid()));
  std::filesystem::create_directories(sub);
  std::filesystem::copy_file(dir / "Llama-3.1-8B.json", sub / "config.json",
                             std::filesystem::copy_options::overwrite_existing);
  CHECK(load_model(sub.string()).num_layers == 32);
  std::filesystem::remove_all(sub);
}

TEST_CASE("Gemma 3: five sliding layers to one global, transformers' defaults for the keys its configs leave out") {
  // The shape of a Gemma 3 text config as published: no vocab_size, max_position_embeddings or
  // layer_types (they are transformers' Gemma3TextConfig defaults: 262,208, 131,072, and a global
  // layer every sliding_window_pattern = 6).
  json c = json::parse(R"({"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 1152,
    "intermediate_size": 6912, "num_hidden_layers": 12, "num_attention_heads": 4, "num_key_value_heads": 1,
    "head_dim": 256, "sliding_window": 512, "torch_dtype": "bfloat16"})");
  const ModelSpec m = model_from_hf_config(c, "gemma3.json");
  CHECK(m.vocab_size == 262208);
  CHECK(m.max_position_embeddings == 131072);
  CHECK(m.tie_word_embeddings);
  CHECK(m.qk_norm);
  CHECK(m.norms_per_layer == 4);
  CHECK(test::count_kind(m, AttentionKind::sliding_window) == 10);
  CHECK(m.layers[5].attention == AttentionKind::full);
  CHECK(m.layers[11].attention == AttentionKind::full);
  CHECK(m.layers[0].sliding_window == 512);
  // The vision-language wrapper reads its text_config and counts the SigLIP tower: 27 blocks of
  // 4h^2 + 4h + 2hI + I + h + 4h (h 1,152, I 4,304), a 14-pixel patch convolution, 64 x 64
  // positions, the post-norm, and the projector's norm + 1,152 x text-width matrix.
  json vlm = json::parse(R"({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
    "num_hidden_layers": 27, "patch_size": 14, "image_size": 896}})");
  vlm["text_config"] = c;
  vlm["text_config"].erase("architectures");
  const ModelSpec v = model_from_hf_config(vlm, "gemma3-vl.json");
  const int64_t h = 1152, inter = 4304;
  const int64_t block = 4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h;
  const int64_t embed = 3 * 14 * 14 * h + h + 64 * 64 * h + 2 * h;
  CHECK(v.vision_encoder_params == 27 * block + embed + h + h * 1152);
  CHECK(test::count_kind(v, AttentionKind::sliding_window) == 10);
}

TEST_CASE("Gemma 3 4B's sparse text_config: heads, KV heads and head_dim from Gemma3TextConfig's defaults") {
  // google/gemma-3-4b-it's text_config names only the widths, the layer count, the window and the
  // RoPE scaling; transformers fills 8 query heads, 4 KV heads, head_dim 256 and 262,208 tokens.
  json c = json::parse(R"({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
      "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
    "torch_dtype": "bfloat16"})");
  const ModelSpec m = model_from_hf_config(c, "gemma-3-4b-it.json");
  CHECK(m.num_attention_heads == 8);
  CHECK(m.num_kv_heads == 4);
  CHECK(m.head_dim == 256);
  CHECK(test::count_kind(m, AttentionKind::sliding_window) == 29);
  // By hand, per layer: q 2560 x 2048 + k, v 2560 x 1024 each + o 2048 x 2560 = 15,728,640;
  // q/k norms 2 x 256; gated MLP 3 x 2560 x 10240 = 78,643,200; four norms 4 x 2560:
  // 94,382,592 x 34 = 3,209,008,128, plus the tied embedding 262,208 x 2560 = 671,252,480 and
  // the final norm 2,560: 3,880,263,168.
  CHECK(count_parameters(m).total == 3880263168LL);
  // A key the config does give still wins over the default (Gemma 3 27B: 32 / 16 heads of 128).
  c["text_config"]["num_attention_heads"] = 32;
  c["text_config"]["num_key_value_heads"] = 16;
  c["text_config"]["head_dim"] = 128;
  const ModelSpec big = model_from_hf_config(c, "gemma-3-27b-it.json");
  CHECK(big.num_attention_heads == 32);
  CHECK(big.num_kv_heads == 16);
  CHECK(big.head_dim == 128);
}
