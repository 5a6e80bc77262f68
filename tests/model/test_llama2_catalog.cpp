// The Llama-2-era catalog entries (the models of the real vLLM calibration runs) and HuggingFace
// repo ids as model names. Counts are worked by hand from the configs and match Meta's published
// exact totals.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "sim/memory/kv_format.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/json_fields.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace {
const KvFormat kBf16{DType::bf16, 64, 16};

/// Runs in `dir` until destroyed (restored even when a check throws).
struct InDirectory {
  std::filesystem::path old = std::filesystem::current_path();
  explicit InDirectory(const std::filesystem::path& dir) { std::filesystem::current_path(dir); }
  ~InDirectory() { std::filesystem::current_path(old); }
};
}  // namespace

TEST_CASE("Llama-2-7B: exactly 6,738,415,616 parameters and 524,288 KV bytes per token") {
  // vocab 32,000, hidden 4,096, 32 layers, 32 heads = 32 KV heads (no GQA) x 128, MLP 11,008.
  // embedding 32,000 x 4,096 = 131,072,000; untied LM head the same.
  // per layer: q,k,v,o 4 x 4096 x 4096 = 67,108,864; MLP 3 x 4096 x 11,008 = 135,266,304;
  // 2 norms 8,192 -> 202,383,360 x 32 = 6,476,267,520; final norm 4,096.
  // 131,072,000 x 2 + 6,476,267,520 + 4,096 = 6,738,415,616 (HF: "6.74B params").
  const ModelSpec m = load_model("llama-2-7b");
  const ParamCount p = count_parameters(m);
  CHECK(p.total == 6738415616);
  CHECK(p.active == p.total);
  CHECK(p.embedding == 131072000);
  CHECK(p.lm_head == 131072000);
  CHECK(p.attention == 32 * int64_t{67108864});
  CHECK(p.dense_mlp == 32 * int64_t{135266304});
  CHECK(m.dtype == DType::fp16);  // published as float16
  CHECK(m.max_position_embeddings == 4096);
  // 2 (K,V) x 32 layers x 32 KV heads x 128 x 2 B = 524,288.
  CHECK(kv_bytes_per_token(m, kBf16) == 524288);
  CHECK(kv_bytes_per_token(m, KvFormat{m.dtype, 64, 16}) == 524288);  // fp16: same width
}

TEST_CASE("Llama-2-70B: exactly 68,976,648,192 parameters and 327,680 KV bytes per token") {
  // vocab 32,000, hidden 8,192, 80 layers, 64 heads / 8 KV heads x 128, MLP 28,672.
  // embedding 32,000 x 8,192 = 262,144,000; LM head the same.
  // per layer: q,o 2 x 8192 x 8192 = 134,217,728; k,v 2 x 8192 x 1024 = 16,777,216;
  // MLP 3 x 8192 x 28,672 = 704,643,072; 2 norms 16,384 -> 855,654,400 x 80 = 68,452,352,000;
  // final norm 8,192. 262,144,000 x 2 + 68,452,352,000 + 8,192 = 68,976,648,192.
  const ModelSpec m = load_model("llama-2-70b");
  const ParamCount p = count_parameters(m);
  CHECK(p.total == 68976648192);
  CHECK(p.attention == 80 * int64_t{150994944});
  CHECK(p.dense_mlp == 80 * int64_t{704643072});
  // 2 x 80 layers x 8 KV heads x 128 x 2 B = 327,680.
  CHECK(kv_bytes_per_token(m, kBf16) == 327680);
}

TEST_CASE("CodeLlama-34B: exactly 33,743,970,304 parameters and 196,608 KV bytes per token") {
  // vocab 32,000, hidden 8,192, 48 layers, 64 heads / 8 KV heads x 128, MLP 22,016.
  // embedding and LM head 262,144,000 each; per layer: attention 150,994,944 (as Llama-2-70B);
  // MLP 3 x 8192 x 22,016 = 541,065,216; 2 norms 16,384 -> 692,076,544 x 48 = 33,219,674,112;
  // final norm 8,192. 524,288,000 + 33,219,674,112 + 8,192 = 33,743,970,304.
  const ModelSpec m = load_model("codellama-34b");
  const ParamCount p = count_parameters(m);
  CHECK(p.total == 33743970304);
  CHECK(p.dense_mlp == 48 * int64_t{541065216});
  CHECK(m.dtype == DType::bf16);
  CHECK(m.max_position_embeddings == 16384);
  // 2 x 48 layers x 8 KV heads x 128 x 2 B = 196,608.
  CHECK(kv_bytes_per_token(m, kBf16) == 196608);
}

TEST_CASE("a HuggingFace repo id names its catalog entry, case-insensitively") {
  CHECK(load_model("meta-llama/Llama-2-7b-hf").name == "llama-2-7b");
  CHECK(load_model("META-LLAMA/LLAMA-2-70B-HF").name == "llama-2-70b");
  CHECK(load_model("codellama/CodeLlama-34b-Instruct-hf").name == "codellama-34b");
  CHECK(load_model("mistralai/Mixtral-8x7B-v0.1").name == "mixtral-8x7b");
  CHECK(count_parameters(load_model("meta-llama/Llama-2-7b-hf")).total == 6738415616);
  // Not a repo of the catalog and not a file: refused, naming the input.
  auto e = test::input_error_of([] { load_model("meta-llama/Llama-2-13b-hf"); });
  CHECK(test::contains(e, "meta-llama/Llama-2-13b-hf"));
  CHECK(test::contains(e, "llama-2-7b"));
  // A directory of that name holding a config.json wins over the alias: the user's own file.
  const auto root = std::filesystem::temp_directory_path() / ("kvcap_model_alias_" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "meta-llama" / "Llama-2-7b-hf");
  std::ofstream(root / "meta-llama" / "Llama-2-7b-hf" / "config.json")
      << R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":1024,
            "intermediate_size":4096,"num_hidden_layers":4,"num_attention_heads":8,
            "num_key_value_heads":2,"vocab_size":1000,"max_position_embeddings":2048,
            "torch_dtype":"bfloat16"})";
  {
    InDirectory in(root);
    CHECK(load_model("meta-llama/Llama-2-7b-hf").num_layers == 4);
  }
  std::filesystem::remove_all(root);
}

TEST_CASE("the catalog texts are the calibration data's config.json files") {
  const std::filesystem::path dir = std::filesystem::path(KVCAP_SHARED_DIR) / "calibration" / "models";
  if (!std::filesystem::is_directory(dir)) {
    MESSAGE("skipped: " << dir.string() << " is absent");
    return;
  }
  const std::pair<const char*, const char*> pairs[] = {{"llama-2-7b", "llama-2-7b-hf.json"},
                                                       {"llama-2-70b", "llama-2-70b-hf.json"},
                                                       {"codellama-34b", "codellama-34b-instruct-hf.json"},
                                                       {"mixtral-8x7b", "mixtral-8x7b-v0.1.json"}};
  for (const auto& pair : pairs) {
    // Named copies rather than a structured binding: clang 14 (the CI sanitizer build) cannot
    // capture a binding in CAPTURE's lambda.
    const char* name = pair.first;
    const char* file = pair.second;
    CAPTURE(name);
    const ModelSpec a = load_model(name);
    const ModelSpec b = load_model((dir / file).string());
    CHECK(count_parameters(a).total == count_parameters(b).total);
    CHECK(kv_bytes_per_token(a, kBf16) == kv_bytes_per_token(b, kBf16));
    CHECK(a.max_position_embeddings == b.max_position_embeddings);
    CHECK(a.dtype == b.dtype);
  }
}
