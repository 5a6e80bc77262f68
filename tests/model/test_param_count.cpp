// Parameter counts derived from shapes, against published totals. Tolerances only where the
// published figure is rounded (half a unit of its last digit, plus the rounding of "B").
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"

using namespace kvcap;

namespace {
double billions(int64_t n) { return static_cast<double>(n) / 1e9; }
ParamCount count(const char* name) { return count_parameters(load_model(name)); }
}  // namespace

TEST_CASE("Llama-3.1-8B: exactly 8,030,261,248 parameters, worked by hand") {
  // embedding 128,256 x 4,096 = 525,336,576, untied LM head the same;
  // per layer: q,o 4096x4096 x2 = 33,554,432; k,v 4096x1024 x2 = 8,388,608; MLP 3 x 4096 x 14,336
  // = 176,160,768; 2 norms 8,192 -> 218,112,000 x 32 = 6,979,584,000; final norm 4,096.
  // 525,336,576 x 2 + 6,979,584,000 + 4,096 = 8,030,261,248 (HF shows "8.03B params").
  const ParamCount p = count("llama-3.1-8b");
  CHECK(p.total == 8030261248);
  CHECK(p.active == p.total);
  CHECK(p.embedding == 525336576);
  CHECK(p.lm_head == 525336576);
}

TEST_CASE("dense models against their model cards") {
  CHECK(std::fabs(billions(count("llama-3.1-70b").total) - 70.6) < 0.06);   // HF: 70.6B
  CHECK(std::fabs(billions(count("llama-3.1-405b").total) - 406) < 0.5);    // HF: 406B
  CHECK(std::fabs(billions(count("mistral-7b").total) - 7.24) < 0.006);     // HF: 7.24B
  CHECK(std::fabs(billions(count("qwen2.5-7b").total) - 7.61) < 0.01);      // Qwen2.5-7B card: 7.61B
  CHECK(std::fabs(billions(count("qwen2.5-72b").total) - 72.7) < 0.06);     // Qwen2.5-72B card: 72.7B
  CHECK(std::fabs(billions(count("qwen3-8b").total) - 8.2) < 0.06);         // Qwen3-8B card: 8.2B
  CHECK(std::fabs(billions(count("qwen3-32b").total) - 32.8) < 0.06);       // Qwen3-32B card: 32.8B
  CHECK(std::fabs(billions(count("gemma-2-9b").total) - 9.24) < 0.006);     // HF: 9.24B (tied embedding)
  CHECK(std::fabs(billions(count("gemma-2-27b").total) - 27.2) < 0.06);     // HF: 27.2B
  CHECK(std::fabs(billions(count("phi-3-mini").total) - 3.82) < 0.006);     // HF: 3.82B
}

TEST_CASE("MoE models: total and active against published figures") {
  // Mistral AI, "Mixtral of experts": 46.7B total, 12.9B used per token.
  ParamCount p = count("mixtral-8x7b");
  CHECK(std::fabs(billions(p.total) - 46.7) < 0.06);
  CHECK(std::fabs(billions(p.active) - 12.9) < 0.06);
  // DeepSeek-V3 technical report: 671B total, 37B activated (the MTP module is not included).
  p = count("deepseek-v3");
  CHECK(std::fabs(billions(p.total) - 671) < 0.6);
  CHECK(std::fabs(billions(p.active) - 37) < 0.6);
  // Qwen3 model cards: 30.5B total / 3.3B activated; 235B / 22B.
  p = count("qwen3-30b-a3b");
  CHECK(std::fabs(billions(p.total) - 30.5) < 0.06);
  CHECK(std::fabs(billions(p.active) - 3.3) < 0.06);
  p = count("qwen3-235b-a22b");
  CHECK(std::fabs(billions(p.total) - 235) < 0.6);
  CHECK(std::fabs(billions(p.active) - 22) < 0.6);
  // OpenAI gpt-oss model card: 116.83B total / 5.13B active; 20.91B / 3.61B. The card's active
  // figure leaves out the (untied) embedding table, a lookup: compare active - embedding.
  p = count("gpt-oss-120b");
  CHECK(std::fabs(billions(p.total) - 116.83) < 0.006);
  CHECK(std::fabs(billions(p.active - p.embedding) - 5.13) < 0.006);
  p = count("gpt-oss-20b");
  CHECK(std::fabs(billions(p.total) - 20.91) < 0.006);
  CHECK(std::fabs(billions(p.active - p.embedding) - 3.61) < 0.006);
}

TEST_CASE("DeepSeek-V2-Lite sample config: 15.7B total, 2.4B activated (model card)") {
  const auto path = std::filesystem::path(KVCAP_SHARED_DIR) / "models" / "DeepSeek-V2-Lite.json";
  if (!std::filesystem::exists(path)) {
    MESSAGE("skipped: " << path.string() << " is absent");
    return;
  }
  const ParamCount p = count_parameters(load_model(path.string()));
  CHECK(std::fabs(billions(p.total) - 15.7) < 0.06);
  // Like OpenAI's, this card's activated figure leaves out the input embedding (a lookup):
  // 2.66B with it, 2.45B without.
  CHECK(std::fabs(billions(p.active - p.embedding) - 2.4) < 0.06);
}

TEST_CASE("per-GPU counts: a rank holds 1/tp of the split tensors and all replicated ones") {
  const ModelSpec m = load_model("llama-3.1-8b");
  const ParamCount whole = count_parameters(m);
  const ParamCount half = count_parameters_per_gpu(m, 2);
  // Everything splits evenly over 2 (vocab 128,256, 8 KV heads, 14,336 MLP) except the norms,
  // which each rank keeps whole: 2 x half = whole + norms.
  CHECK(2 * half.total == whole.total + whole.norms);
  CHECK(half.norms == whole.norms);
  // At tp = 16 the 8 KV heads are replicated: each rank keeps one head's k and v projections,
  // 2 x 4096 x 128 per layer, instead of 8/16 of a head.
  const ParamCount p16 = count_parameters_per_gpu(m, 16);
  const int64_t q_o = 2 * 4096 * (4096 / 16);
  CHECK(p16.attention == 32 * (q_o + 2 * 4096 * 128));
  // MLA: q_a and kv_a down-projections are replicated, the rest splits.
  const ModelSpec ds = load_model("deepseek-v3");
  const ParamCount d8 = count_parameters_per_gpu(ds, 8);
  CHECK(d8.moe_router == count_parameters(ds).moe_router);
  CHECK(d8.attention > count_parameters(ds).attention / 8);
}
